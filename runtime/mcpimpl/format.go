package mcpimpl

import (
	"net/netip"
	"strings"
	"time"
)

// Formats lists the format names ValidFormat checks; generated code checks
// them only when generation asked for it (config checkFormats).
var Formats = []string{"date", "date-time", "email", "uri", "uuid"}

// ValidFormat reports whether s is valid for the JSON Schema format name,
// by the grammar of the RFC that JSON Schema names for it, ASCII only:
//
//   - date: RFC 3339 full-date, a day that exists (2024-02-29, not
//     2023-02-29).
//   - date-time: RFC 3339 date-time, "T" and "Z" in either case, a
//     numeric offset with its minutes. Second 60 is a leap second, which
//     RFC 3339 §5.7 allows at the end of a month: the time must then be
//     23:59:60 in UTC once the offset is applied
//     (1998-12-31T15:59:60-08:00).
//   - email: an RFC 5321 §4.1.2 Mailbox: a dot-string or quoted-string
//     local part ("john doe"@example.com) of at most 64 octets, "@", and
//     a domain of letter-digit-hyphen labels of at most 63 octets or an
//     IPv4 or IPv6 address literal ([127.0.0.1], [IPv6:::1]); at most 254
//     octets in all. A general address literal (a tag other than IPv6) is
//     refused: none is registered.
//   - uri: an RFC 3986 §3 URI: a scheme, then hier-part, query and
//     fragment of the characters RFC 3986 allows there, percent-encoding
//     well formed, an authority's port digits only, an IP literal an IPv6
//     address (no zone) or IPvFuture. Relative references are refused.
//   - uuid: the RFC 9562 §4 string form, 8-4-4-4-12 hexadecimal digits in
//     either case.
//
// Other names are always valid.
func ValidFormat(name, s string) bool {
	switch name {
	case "date":
		_, _, _, ok := fullDate(s)
		return ok
	case "date-time":
		return dateTime(s)
	case "email":
		return mailbox(s)
	case "uri":
		return uri(s)
	case "uuid":
		return uuid(s)
	}
	return true
}

// num reads the unsigned decimal of s, all ASCII digits.
func num(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// fullDate reads RFC 3339's full-date: date-fullyear "-" date-month "-"
// date-mday, the day within the month's length (§5.7).
func fullDate(s string) (y, m, d int, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	y, ok1 := num(s[:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return 0, 0, 0, false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return y, m, d, d <= days
}

// dateTime reads RFC 3339's date-time: full-date "T" full-time, where
// full-time is time-hour ":" time-minute ":" time-second
// ["." 1*DIGIT] ("Z" / ("+" / "-") time-hour ":" time-minute).
func dateTime(s string) bool {
	if len(s) < 20 || s[10] != 'T' && s[10] != 't' {
		return false
	}
	y, mo, d, ok := fullDate(s[:10])
	if !ok {
		return false
	}
	t := s[11:]
	if len(t) < 9 || t[2] != ':' || t[5] != ':' {
		return false
	}
	h, ok1 := num(t[:2])
	mi, ok2 := num(t[3:5])
	sec, ok3 := num(t[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 60 {
		return false
	}
	t = t[8:]
	if strings.HasPrefix(t, ".") {
		i := 1
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		t = t[i:]
	}
	offset := 0 // minutes east of UTC
	switch {
	case t == "Z" || t == "z":
	case len(t) == 6 && (t[0] == '+' || t[0] == '-') && t[3] == ':':
		oh, ok1 := num(t[1:3])
		om, ok2 := num(t[4:])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offset = oh*60 + om
		if t[0] == '-' {
			offset = -offset
		}
	default:
		return false
	}
	if sec == 60 {
		// The last second of a month in UTC, wherever it is written.
		utc := time.Date(y, time.Month(mo), d, h, mi, 0, 0, time.UTC).Add(-time.Duration(offset) * time.Minute)
		if utc.Hour() != 23 || utc.Minute() != 59 || utc.AddDate(0, 0, 1).Day() != 1 {
			return false
		}
	}
	return true
}

// mailbox reads RFC 5321's Mailbox: Local-part "@" (Domain /
// address-literal).
func mailbox(s string) bool {
	if len(s) > 254 { // a path is at most 256 octets with its "<" and ">" (§4.5.3.1.3)
		return false
	}
	var local string
	if strings.HasPrefix(s, `"`) {
		// Quoted-string: DQUOTE *(qtextSMTP / quoted-pairSMTP) DQUOTE.
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			switch c := s[i]; {
			case c == '\\':
				if i+1 >= len(s) || s[i+1] < 32 || s[i+1] > 126 {
					return false
				}
				i++
			case c < 32 || c > 126:
				return false
			}
		}
		if i >= len(s) {
			return false
		}
		local = s[:i+1]
	} else {
		// Dot-string: Atom *("." Atom); an atom is 1*atext.
		i := strings.IndexByte(s, '@')
		if i < 0 {
			return false
		}
		local = s[:i]
		for _, atom := range strings.Split(local, ".") {
			if atom == "" || strings.IndexFunc(atom, func(r rune) bool { return !isAtext(r) }) >= 0 {
				return false
			}
		}
	}
	domain, ok := strings.CutPrefix(s[len(local):], "@")
	if !ok || len(local) > 64 { // §4.5.3.1.1
		return false
	}
	if lit, ok := strings.CutPrefix(domain, "["); ok {
		lit, ok = strings.CutSuffix(lit, "]")
		if !ok {
			return false
		}
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			a, err := netip.ParseAddr(v6)
			return err == nil && a.Is6() && a.Zone() == ""
		}
		return ipv4(lit, true)
	}
	return domainName(domain)
}

// isAtext is RFC 5322's atext, which RFC 5321 uses.
func isAtext(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r)
}

// domainName reads RFC 5321's Domain: sub-domain *("." sub-domain), each
// Let-dig [Ldh-str] and at most 63 octets (RFC 1035), at most 255 in all.
func domainName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := range len(label) {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// ipv4 reads four dot-separated decimal numbers up to 255: RFC 5321's
// IPv4-address-literal (1*3DIGIT, leading zeros allowed) or, without
// leadingZeros, RFC 3986's dec-octet.
func ipv4(s string, leadingZeros bool) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, ok := num(p)
		if !ok || len(p) > 3 || n > 255 || !leadingZeros && len(p) > 1 && p[0] == '0' {
			return false
		}
	}
	return true
}

// uri reads RFC 3986's URI: scheme ":" hier-part ["?" query]
// ["#" fragment].
func uri(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		if !uriChars(rest[i+1:], "/?") {
			return false
		}
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		if !uriChars(rest[i+1:], "/?") {
			return false
		}
		rest = rest[:i]
	}
	if auth, ok := strings.CutPrefix(rest, "//"); ok {
		path := ""
		if i := strings.IndexByte(auth, '/'); i >= 0 {
			auth, path = auth[:i], auth[i:]
		}
		return authority(auth) && uriChars(path, "/")
	}
	// path-absolute, path-rootless or path-empty: segments of pchar.
	return uriChars(rest, "/")
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// uriChars reports whether s is made of RFC 3986 pchar (unreserved,
// pct-encoded, sub-delims, ":" and "@") and the bytes of also.
func uriChars(s, also string) bool { return uriCharsOf(s, also+":@") }

// uriCharsOf reports whether s is made of unreserved, pct-encoded and
// sub-delims characters and the bytes of allowed (userinfo adds ":", a
// reg-name nothing).
func uriCharsOf(s, allowed string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c), c >= '0' && c <= '9', strings.IndexByte("-._~!$&'()*+,;=", c) >= 0, strings.IndexByte(allowed, c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// authority reads RFC 3986's authority: [userinfo "@"] host [":" port].
func authority(s string) bool {
	if i := strings.IndexByte(s, '@'); i >= 0 {
		if !uriCharsOf(s[:i], ":") {
			return false
		}
		s = s[i+1:]
	}
	host, port := s, ""
	if lit, ok := strings.CutPrefix(s, "["); ok {
		end := strings.IndexByte(lit, ']')
		if end < 0 || !ipLiteral(lit[:end]) {
			return false
		}
		host, port = "", lit[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return false
			}
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	if port != "" {
		if _, ok := num(port); !ok {
			return false
		}
	}
	// A reg-name; an IPv4address is one too.
	return uriCharsOf(host, "")
}

// ipLiteral reads what RFC 3986's IP-literal holds between its brackets:
// an IPv6address (its embedded IPv4 in dec-octets, no zone) or IPvFuture,
// "v" 1*HEXDIG "." 1*(unreserved / sub-delims / ":").
func ipLiteral(s string) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		dot := strings.IndexByte(s, '.')
		if dot < 2 || dot == len(s)-1 {
			return false
		}
		for i := 1; i < dot; i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return !strings.Contains(s[dot+1:], "%") && uriCharsOf(s[dot+1:], ":")
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return false
	}
	if i := strings.LastIndexByte(s, ':'); strings.Contains(s[i+1:], ".") {
		return ipv4(s[i+1:], false)
	}
	return true
}

// uuid reads the string form of RFC 9562 §4: 8-4-4-4-12 hexadecimal
// digits.
func uuid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !isHex(c):
			return false
		}
	}
	return true
}
