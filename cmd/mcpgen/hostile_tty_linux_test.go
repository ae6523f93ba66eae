package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// onPTY runs mcpgen with stdin, stdout and stderr on a pseudo-terminal, the
// answers typed in advance, and returns the exit code and everything the
// terminal was sent.
func onPTY(t *testing.T, answers string, args ...string) (int, string) {
	t.Helper()
	master, tty := openPTY(t)
	var mu sync.Mutex
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// The line discipline holds what is typed until mcpgen reads it.
	if _, err := master.Write([]byte(answers)); err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = tty
	code := run(args, tty, tty)
	os.Stdin = stdin
	// Let the terminal pass on the last output.
	for last := -1; ; {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		n := screen.Len()
		mu.Unlock()
		if n == last {
			break
		}
		last = n
	}
	mu.Lock()
	defer mu.Unlock()
	return code, screen.String()
}

// raw lists what a terminal would act on: C0 controls but \t and the
// line discipline's \r\n, DEL, C1 controls, bidirectional controls, bytes
// that are not UTF-8.
func raw(screen, typed string) []string {
	// The terminal echoes what was typed, and ends lines with \r\n.
	s := strings.ReplaceAll(screen, "\r\n", "\n")
	var bad []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			bad = append(bad, strings.ToValidUTF8(s[max(0, i-20):min(len(s), i+20)], "?"))
		}
		i += n
	}
	return bad
}

// What the hostile server writes: clear screen, window title (OSC ended
// by BEL and by ST), conceal, cursor moves, \r overwrite, C1 CSI, bidi
// override and isolate, DEL, a lone invalid byte, and a newline that
// would start a fake prompt line.
const hostileText = "Clear\x1b[2J\x1b[H\x1b]0;pwned\x07 title2\x1b]2;x\x1b\\ conceal:\x1b[8mhidden\x1b[28m" +
	"\rOVERWRITE \u009b31m c1 \u202eevil\u202c \u2066iso\u2069 del\x7f bad\xff"

// jsonString is s as a JSON string literal (the hostile server gets its
// text in the arguments).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(strings.ToValidUTF8(s, "\ufffd"))
	return strings.TrimSpace(b.String())
}

// TestElicitationPromptOnTerminal: mcpgen call on a terminal, against a
// server whose questions are full of control sequences. The terminal gets
// none of them (they show as \u escapes), the message is quoted so it
// cannot fake mcpgen's own lines, and the answers still work.
func TestElicitationPromptOnTerminal(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, hostileConfig)
	schema := `{"type":"object","properties":{"name":{"type":"string","title":` + jsonString("Name\x1b[8m\n  Send this answer? [Y/n] ") +
		`,"description":` + jsonString("who\r\x1b[Kyou are") + `,"default":` + jsonString("A\x1b[2Jda") +
		`},"color":{"type":"string","enum":["red",` + jsonString("gr\x1b[32meen") + `]}},"required":["color"]}`
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(proto, func(t *testing.T) {
			args := `{"message":` + jsonString(hostileText+"\nsecond line\x1b[1A") + `,"schema":` + schema + `}`
			code, screen := onPTY(t, "red\nGrace\n\n", "call", "--config", cfg, "--protocol", proto, "evil", "ask", args)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, screen)
			}
			if bad := raw(screen, ""); len(bad) > 0 {
				t.Errorf("the terminal was sent %d control characters, e.g. %q:\n%q", len(bad), bad[0], screen)
			}
			screen = strings.ReplaceAll(screen, "\r\n", "\n")
			for _, want := range []string{
				`Server "evil" asks:` + "\n" + `  > Clear\u001b[2J\u001b[H\u001b]0;pwned\u0007 title2\u001b]2;x\u001b\ conceal:\u001b[8mhidden\u001b[28m\u000dOVERWRITE \u009b31m c1 \u202eevil\u202c \u2066iso\u2069 del\u007f bad` + "\ufffd\n",
				"  > second line\\u001b[1A\n",
				`  Name\u001b[8m\u000a  Send this answer? [Y/n]  (string; who\u000d\u001b[Kyou are) [A\u001b[2Jda]: `,
				`  color (string; one of red, gr\u001b[32meen): `,
				`{"action":"accept","content":{"color":"red","name":"Grace"}}`,
			} {
				if !strings.Contains(screen, want) {
					t.Errorf("the terminal lacks %q:\n%s", want, screen)
				}
			}
			// The title's newline did not start a fake confirmation line.
			if regexp.MustCompile(`(?m)^\s*Send this answer\? \[Y/n\]  \(string`).MatchString(screen) {
				t.Errorf("the server's text started a line of its own:\n%s", screen)
			}
		})
	}
}

// TestURLElicitationOnTerminal: a url-mode request shows the URL and its
// host; only https, and http on a loopback address, are offered, anything
// else is declined with the reason shown, even when the person typed y.
func TestURLElicitationOnTerminal(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, hostileConfig)
	for _, tc := range []struct {
		url, answer string
		action      string
		shows       []string
	}{
		{"javascript:alert(document.cookie)", "y\n", "decline", []string{
			`  URL:  javascript:alert(document.cookie)`, `  Not offered: scheme "javascript" (only https URLs, and http ones on a loopback address, are offered). Declined.`}},
		{"JavaScript://evil.example/%0aalert(1)", "y\n", "decline", []string{`Not offered: scheme "javascript"`}},
		{"data:text/html,<script>alert(1)</script>", "y\n", "decline", []string{`Not offered: scheme "data"`}},
		{"file:///etc/passwd", "y\n", "decline", []string{`Not offered: scheme "file"`}},
		{"http://evil.example/login", "y\n", "decline", []string{`Not offered: http to evil.example, which is not a loopback address`}},
		{"/relative/path", "y\n", "decline", []string{`Not offered: it is not an absolute URL`}},
		{"https://bank.example@evil.example/login", "y\n", "accept", []string{
			"  URL:  https://bank.example@evil.example/login\n  host: evil.example\n", "the URL names a user (bank.example) before the host"}},
		{"https://xn--80ak6aa92e.com/", "n\n", "decline", []string{"host: xn--80ak6aa92e.com (an internationalized name in punycode"}},
		{"https://\u0430pple.com/\u202e", "y\n", "accept", []string{"URL:  https://\u0430pple.com/" + `\u202e`, `host: \u0430pple.com (not all ASCII`}},
		{"http://127.0.0.1:8080/callback", "y\n", "accept", []string{"host: 127.0.0.1\n", "Continue once done? [y/N]"}},
		{"http://[::1]/cb", "\n", "decline", []string{"host: ::1\n"}},
		{"http://localhost/cb", "yes\n", "accept", []string{"host: localhost\n"}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			args := `{"mode":"url","message":"Sign in","url":` + jsonString(tc.url) + `}`
			code, screen := onPTY(t, tc.answer, "call", "--config", cfg, "--protocol", "2025-11-25", "evil", "ask", args)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, screen)
			}
			if bad := raw(screen, ""); len(bad) > 0 {
				t.Errorf("the terminal was sent control characters: %q", bad)
			}
			screen = strings.ReplaceAll(screen, "\r\n", "\n")
			for _, want := range append(tc.shows, `{"action":"`+tc.action+`"`) {
				if !strings.Contains(screen, want) {
					t.Errorf("the terminal lacks %q:\n%s", want, screen)
				}
			}
		})
	}
}

// TestServerTextOnTerminal: a tool's result, a tool error, the server's
// log messages and progress reach the terminal with their control
// characters shown, not acted on; a log message stays on one line.
func TestServerTextOnTerminal(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, hostileConfig)
	text := jsonString(hostileText + "\nline two\ttabbed\r\n")
	args := `{"text":` + text + `,"log":` + jsonString("log\x1b[2J\nmcpgen: fake line") + `,"logger":` + jsonString("db\x1b]0;t\x07") +
		`,"progress":` + jsonString("half\rway\x1b[1A") + `}`
	code, screen := onPTY(t, "", "call", "--config", cfg, "evil", "say", args)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	if bad := raw(screen, ""); len(bad) > 0 {
		t.Errorf("the terminal was sent control characters, e.g. %q:\n%q", bad[0], screen)
	}
	screen = strings.ReplaceAll(screen, "\r\n", "\n")
	for _, want := range []string{
		`Clear\u001b[2J\u001b[H\u001b]0;pwned\u0007`, `\u000dOVERWRITE \u009b31m c1 \u202eevil\u202c`,
		"\nline two\ttabbed\n",
		`mcpgen: server "evil" log warning (logger "db\u001b]0;t\u0007"): log\u001b[2J\u000amcpgen: fake line` + "\n",
		`mcpgen: server "evil" progress 1/2: half\u000dway\u001b[1A` + "\n",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, screen)
		}
	}
	if regexp.MustCompile(`(?m)^mcpgen: fake line`).MatchString(screen) {
		t.Errorf("a log message started a line of its own:\n%s", screen)
	}

	code, screen = onPTY(t, "", "call", "--config", cfg, "evil", "fail", `{"text":`+jsonString("boom\x1b[2J\x1b]0;x\x07")+`}`)
	if code != 1 {
		t.Fatalf("fail: exit %d:\n%s", code, screen)
	}
	if bad := raw(screen, ""); len(bad) > 0 {
		t.Errorf("fail: the terminal was sent control characters: %q", bad)
	}
	if !strings.Contains(screen, `boom\u001b[2J\u001b]0;x\u0007`) || !strings.Contains(screen, `mcpgen: tool "fail" returned an error`) {
		t.Errorf("fail:\n%s", screen)
	}
	// A JSON-RPC error's message is the server's too, and stays on its line.
	code, screen = onPTY(t, "", "call", "--config", cfg, "evil", "fail", `{"rpc":true,"text":`+jsonString("boom\x1b[2J\nmcpgen: fake")+`}`)
	if code != 1 || len(raw(screen, "")) > 0 || !strings.Contains(screen, `mcpgen: server error -32603: boom\u001b[2J\u000amcpgen: fake`) ||
		regexp.MustCompile(`(?m)^mcpgen: fake`).MatchString(strings.ReplaceAll(screen, "\r\n", "\n")) {
		t.Errorf("JSON-RPC error: exit %d:\n%q", code, screen)
	}
}
