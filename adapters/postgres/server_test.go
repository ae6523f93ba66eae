package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/runtime/mcpimpl"

	"github.com/jackc/pgx/v5"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The tests start their own PostgreSQL servers: initdb into a temporary
// directory, then the server on a Unix socket in it, with no TCP port. The
// server refuses to run as root, so under root (CI) it runs as the
// postgres user, or nobody. Two servers start at once: pg, shared by the
// tests that at most cut connections, and faultPG, which the tests that
// restart, stop or freeze a server use one at a time.

// pgServer is one test server.
type pgServer struct {
	dir      string // data directory's parent, and the socket directory
	missing  string // why there is no server
	pgctl    string
	uid, gid int
	// spare holds databases made ahead, while tests wait on other
	// things: creating one takes a few hundred milliseconds.
	spare chan string
}

var pg, faultPG = &pgServer{}, &pgServer{}

func TestMain(m *testing.M) {
	if mode := os.Getenv("PGH_MODE"); mode != "" {
		os.Exit(helperMain(mode))
	}
	var wg sync.WaitGroup
	for _, s := range []*pgServer{pg, faultPG} {
		wg.Go(func() {
			if err := s.start(); err != nil {
				s.missing = err.Error()
			}
		})
	}
	wg.Wait()
	if pg.missing == "" {
		pg.makeAhead(3)
	}
	code := m.Run()
	pg.stop()
	faultPG.stop()
	os.Exit(code)
}

// needPG skips (or under CI=true fails) a test when there is no server.
func needPG(t testing.TB) { t.Helper(); pg.need(t) }

func (s *pgServer) need(t testing.TB) {
	t.Helper()
	if s.missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL is required under CI=true: %s", s.missing)
	}
	t.Skipf("no PostgreSQL server: %s", s.missing)
}

// pgBin finds a server program: in MCPGEN_PG_BIN when set, else in the
// PATH or Debian's /usr/lib/postgresql/<version>/bin (the newest).
func pgBin(name string) (string, error) {
	if dir := os.Getenv("MCPGEN_PG_BIN"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s is not in MCPGEN_PG_BIN: %v", name, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(ms) == 0 {
		return "", fmt.Errorf("%s is not installed (not in PATH nor /usr/lib/postgresql/*/bin; Debian: apt-get install postgresql)", name)
	}
	slices.SortFunc(ms, func(a, b string) int { return versionOf(a) - versionOf(b) })
	return ms[len(ms)-1], nil
}

func versionOf(p string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return v
}

// asServerUser makes cmd run unprivileged when the tests run as root.
func (s *pgServer) asServerUser(cmd *exec.Cmd) {
	if s.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}}
	}
}

func (s *pgServer) start() error {
	initdb, err := pgBin("initdb")
	if err != nil {
		return err
	}
	if s.pgctl, err = pgBin("pg_ctl"); err != nil {
		return err
	}
	s.uid, s.gid = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			if u, err = user.Lookup("nobody"); err != nil {
				return errors.New("running as root and there is neither a postgres nor a nobody user to run the server as")
			}
		}
		s.uid, _ = strconv.Atoi(u.Uid)
		s.gid, _ = strconv.Atoi(u.Gid)
	}
	dir, err := os.MkdirTemp("", "mcpgen-pg-")
	if err != nil {
		return err
	}
	if s.uid >= 0 {
		if err := os.Chown(dir, s.uid, s.gid); err != nil {
			return err
		}
	}
	cmd := exec.Command(initdb, "-D", filepath.Join(dir, "data"), "-U", "mcpgen", "-A", "trust", "-E", "UTF8", "--no-sync")
	s.asServerUser(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	s.dir = dir
	if out, err := s.up(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		_ = os.RemoveAll(dir)
		s.dir = ""
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// up starts the server.
func (s *pgServer) up() ([]byte, error) {
	return s.ctl("-l", filepath.Join(s.dir, "log"), "-o", "-k "+s.dir+" -c listen_addresses= -c max_connections=300", "start")
}

// ctl runs pg_ctl on the server's data directory, waiting for it.
func (s *pgServer) ctl(args ...string) ([]byte, error) {
	cmd := exec.Command(s.pgctl, append([]string{"-D", filepath.Join(s.dir, "data"), "-w"}, args...)...)
	s.asServerUser(cmd)
	return cmd.CombinedOutput()
}

func (s *pgServer) stop() {
	if s.dir == "" {
		return
	}
	_, _ = s.ctl("-m", "immediate", "stop")
	_ = os.RemoveAll(s.dir)
}

func (s *pgServer) dsn(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=mcpgen dbname=%s sslmode=disable", s.dir, db)
}

func dsnFor(db string) string { return pg.dsn(db) }

var dbSeq atomic.Int32

// newDatabase creates an empty database on pg for one test and returns
// its DSN.
func newDatabase(t testing.TB) string { t.Helper(); return pg.newDatabase(t) }

// Databases are not dropped: the server and its files go when the tests
// end.
func (s *pgServer) newDatabase(t testing.TB) string {
	t.Helper()
	s.need(t)
	if s.spare != nil {
		if name, ok := <-s.spare; ok {
			return s.dsn(name)
		}
	}
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	s.admin(t, "CREATE DATABASE "+name)
	return s.dsn(name)
}

// makeAhead keeps n databases ready, until creating one fails.
func (s *pgServer) makeAhead(n int) {
	s.spare = make(chan string, n)
	go func() {
		defer close(s.spare)
		ctx := context.Background()
		c, err := pgx.Connect(ctx, s.dsn("postgres"))
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for {
			name := fmt.Sprintf("t%d", dbSeq.Add(1))
			if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
				return
			}
			s.spare <- name
		}
	}()
}

// admin runs sql on pg's postgres database, outside any store.
func admin(t testing.TB, sql string, args ...any) { t.Helper(); pg.admin(t, sql, args...) }

func (s *pgServer) admin(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// terminate cuts, from a superuser connection, the connections to
// database db that match where (SQL over pg_stat_activity), and returns
// how many it cut.
func (s *pgServer) terminate(t testing.TB, db, where string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		t.Error(err) // may run outside the test's goroutine
		return 0
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND (`+where+`)`, db).Scan(&n); err != nil {
		t.Error(err)
	}
	return n
}

// restart restarts the server: mode fast or immediate.
func (s *pgServer) restart(t testing.TB, mode string) {
	t.Helper()
	if mode == "immediate" {
		// Little to replay, so the restart is quick.
		s.admin(t, "CHECKPOINT")
	}
	// -l, so that the server does not inherit (and hold open) our pipe.
	if out, err := s.ctl("-l", filepath.Join(s.dir, "log"), "-m", mode, "restart"); err != nil {
		t.Fatalf("pg_ctl restart -m %s: %v\n%s", mode, err, out)
	}
}

// bounce stops the server (mode fast or immediate) and starts it again in
// the background, so that what follows runs while it is down or starting
// up; the returned func waits for it to be up.
func (s *pgServer) bounce(t testing.TB, mode string) func() error {
	t.Helper()
	if mode == "immediate" {
		s.admin(t, "CHECKPOINT")
	}
	if out, err := s.ctl("-m", mode, "stop"); err != nil {
		t.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
	done := make(chan error, 1)
	go func() {
		out, err := s.up()
		if err != nil {
			err = fmt.Errorf("pg_ctl start: %v\n%s", err, out)
		}
		done <- err
	}()
	return func() error { return <-done }
}

// freeze stops (SIGSTOP) the postmaster and every backend; the returned
// func lets them go on (SIGCONT). The test's cleanup thaws them anyway.
func (s *pgServer) freeze(t testing.TB) func() {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	postmaster, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("postmaster.pid: %q", line)
	}
	pids := []int{postmaster}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		st, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces.
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 1 && f[1] == line {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	var once sync.Once
	thaw := func() {
		once.Do(func() {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}

// openDB opens a store on dsn, closed with the test.
func openDB(t testing.TB, dsn string, opts ...Option) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// The example CRM server, built once and run as a real process over
// streamable HTTP. Each execution of update_deal appends a note to the
// deal, so the notes count executions.

var crmBuild struct {
	once sync.Once
	path string
	err  error
}

func crmHTTP(t testing.TB) string {
	t.Helper()
	crmBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "crm-server")
		if err != nil {
			crmBuild.err = err
			return
		}
		crmBuild.path = filepath.Join(dir, "crm-server")
		cmd := exec.Command("go", "build", "-o", crmBuild.path, "./crm-server")
		cmd.Dir = filepath.Join("..", "..", "example")
		if out, err := cmd.CombinedOutput(); err != nil {
			crmBuild.err = fmt.Errorf("go build ./crm-server: %v\n%s", err, out)
		}
	})
	if crmBuild.err != nil {
		t.Fatal(crmBuild.err)
	}
	cmd := exec.Command(crmBuild.path, "-http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("crm-server did not print its endpoint: %v", err)
	}
	return strings.TrimSpace(line)
}

// update_deal's schema as the server declares it; the binding strips
// caller_token, the identity argument.
const crmUpdateIn = `{"type":"object","properties":{"caller_token":{"type":"string","minLength":1},"deal_id":{"type":"string","pattern":"^D-[0-9]{4}$"},"note":{"type":"string","maxLength":500}},"required":["caller_token","deal_id"],"additionalProperties":false}`

type NoteInput struct {
	DealID string `json:"deal_id"`
	Note   string `json:"note"`
}

func (*NoteInput) Validate() error { return nil }

type GetDealInput struct {
	DealID string `json:"deal_id"`
}

func (*GetDealInput) Validate() error { return nil }

type Deal struct {
	ID    string   `json:"id"`
	Notes []string `json:"notes"`
}

func (*Deal) Validate() error { return nil }

var alice = mcpruntime.WithPrincipal(context.Background(), "alice", "tok-alice")

func desc(name, in string) *mcpruntime.Descriptor {
	return &mcpruntime.Descriptor{Name: name, GoName: name, Annotations: mcpruntime.DefaultAnnotations(),
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(`{"type":"object"}`)}
}

func updateDeal(c mcpruntime.Caller, g *mcpruntime.Gate) *mcpruntime.Tool[NoteInput, Deal] {
	schema, _, err := mcpimpl.StripProperty(json.RawMessage(crmUpdateIn), "caller_token")
	if err != nil {
		panic(err)
	}
	return mcpruntime.NewTool[NoteInput, Deal](desc("update_deal", string(schema)), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithIdentityArgument("caller_token"), mcpruntime.WithGate(g))
}

// countNotes counts the executions that left note on deal D-2001.
func countNotes(t testing.TB, c mcpruntime.Caller, note string) int {
	t.Helper()
	r, err := mcpruntime.NewTool[GetDealInput, Deal](desc("get_deal", `{"type":"object"}`), c).Call(context.Background(), GetDealInput{DealID: "D-2001"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range r.Output.Notes {
		if x == "alice: "+note {
			n++
		}
	}
	return n
}

// approved makes a gated call to update_deal and approves it.
func approved(t testing.TB, c mcpruntime.Caller, g *mcpruntime.Gate, note string) *mcpruntime.Approval {
	t.Helper()
	ctx := context.Background()
	if _, err := updateDeal(c, g).Call(alice, NoteInput{DealID: "D-2001", Note: note}); err == nil {
		t.Fatal("update_deal was not gated")
	}
	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range pending {
		var in NoteInput
		if a.Tool == "update_deal" && json.Unmarshal(a.Args, &in) == nil && in.Note == note {
			if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	t.Fatalf("no pending approval for %q", note)
	return nil
}

// outcome is what one resumer got.
type outcome struct {
	Out     string `json:"out,omitempty"`
	Err     string `json:"err,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
}

func resumeOnce(ctx context.Context, c mcpruntime.Caller, g *mcpruntime.Gate, id string) outcome {
	r, err := updateDeal(c, g).Resume(ctx, id)
	if err != nil {
		return outcome{Err: err.Error(), Unknown: errors.Is(err, mcpruntime.ErrOutcomeUnknown)}
	}
	b, _ := json.Marshal(r.Output)
	return outcome{Out: string(b)}
}

// helperEnv is the environment of a helper process: the race detector
// (under -race) does not wait its default second at exit.
func helperEnv() []string {
	return append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// helper is a resuming process: this test binary in a helper mode.
type helper struct {
	cmd   *exec.Cmd
	stdin interface{ Write([]byte) (int, error) }
	out   *bufio.Reader
}

// startHelper runs n resumers of approval id in a new process. With stop
// set, the first resumer to reach that point prints "AT point pid" and
// waits for a line on its stdin.
func startHelper(t *testing.T, dsn, id, endpoint string, n int, stop string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(helperEnv(), "PGH_MODE=resume", "PGH_DSN="+dsn, "PGH_ID="+id, "PGH_ENDPOINT="+endpoint,
		"PGH_N="+strconv.Itoa(n), "PGH_STOP="+stop)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &helper{cmd: cmd, stdin: in, out: bufio.NewReader(out)}
}

// at waits for the helper to stop at its point and returns the pid of the
// backend connection it is using there.
func (h *helper) at(t *testing.T, point string) uint32 {
	t.Helper()
	line, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper did not reach %s: %v", point, err)
	}
	var got string
	var pid uint32
	if _, err := fmt.Sscanf(line, "AT %s %d", &got, &pid); err != nil || got != point {
		t.Fatalf("helper: want AT %s, got %q", point, line)
	}
	return pid
}

// results reads the helper's outcomes until it exits.
func (h *helper) results(t *testing.T) []outcome {
	t.Helper()
	var out []outcome
	for {
		line, err := h.out.ReadString('\n')
		if err != nil {
			break
		}
		var o outcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("helper printed %q", line)
		}
		out = append(out, o)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	return out
}

// migrateProcess opens the database from n goroutines of a new process,
// each applying the migrations.
func migrateProcess(dsn string, n int) error {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(helperEnv(), "PGH_MODE=migrate", "PGH_DSN="+dsn, "PGH_N="+strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

func helperMain(mode string) int {
	ctx := context.Background()
	dsn := os.Getenv("PGH_DSN")
	n, _ := strconv.Atoi(os.Getenv("PGH_N"))
	switch mode {
	case "migrate":
		var wg sync.WaitGroup
		var failed atomic.Bool
		for range n {
			wg.Go(func() {
				db, err := Open(ctx, dsn)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
					return
				}
				db.Close()
			})
		}
		wg.Wait()
		if failed.Load() {
			return 1
		}
		return 0
	case "resume":
		if stop := os.Getenv("PGH_STOP"); stop != "" {
			var once sync.Once
			hook = func(point string, pid uint32) {
				if point != stop {
					return
				}
				once.Do(func() {
					fmt.Printf("AT %s %d\n", point, pid)
					_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
				})
			}
		}
		db, err := Open(ctx, dsn, WithoutMigrate())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer db.Close()
		c := mcpgo.StreamableHTTP(os.Getenv("PGH_ENDPOINT"))
		defer c.Close()
		g := mcpruntime.NewGate(db.Approvals())
		id := os.Getenv("PGH_ID")
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				o := resumeOnce(alice, c, g, id)
				b, _ := json.Marshal(o)
				mu.Lock()
				fmt.Println(string(b))
				mu.Unlock()
			})
		}
		wg.Wait()
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown PGH_MODE", mode)
	return 2
}
