package manager

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// The SSRF guard: http and sse servers must live on public addresses, so a
// registry entry (or a DNS answer) cannot point the program at itself, the
// local network or the cloud's metadata service. The registry checks
// literal addresses and well-known names when entries are saved and loaded;
// the mcpgo adapter's dialer checks every address it actually connects to.

// ErrBlockedAddress matches every *BlockedAddressError.
var ErrBlockedAddress = errors.New("address blocked by the SSRF guard")

// BlockedAddressError reports a host or address the SSRF guard refuses.
type BlockedAddressError struct {
	Host   string     // the host name as written, if any
	Addr   netip.Addr // the refused address; invalid when the name alone was refused
	Reason string     // "loopback", "private", "cloud metadata", ...
	// Private is true when EnvAllowPrivateNetworks would allow the address.
	Private bool
}

func (e *BlockedAddressError) Error() string {
	var b strings.Builder
	b.WriteString("refusing ")
	switch {
	case e.Host != "" && e.Addr.IsValid() && e.Host != e.Addr.String():
		fmt.Fprintf(&b, "%q: it resolves to %s, a %s address", e.Host, e.Addr, e.Reason)
	case e.Addr.IsValid():
		fmt.Fprintf(&b, "%s: a %s address", e.Addr, e.Reason)
	default:
		fmt.Fprintf(&b, "%q: %s", e.Host, e.Reason)
	}
	if e.Private {
		fmt.Fprintf(&b, " (set %s=1 to allow private networks for local development)", EnvAllowPrivateNetworks)
	} else {
		b.WriteString(" (never allowed)")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedAddressError) Is(target error) bool { return target == ErrBlockedAddress }

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("169.254.169.253"), // AWS DNS
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
		netip.MustParseAddr("fd00:ec2::253"),
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
	}
	metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}

	// Allowed by AllowPrivateNetworks.
	privateRanges = []struct {
		p      netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
		{netip.MustParsePrefix("::1/128"), "loopback"},
		{netip.MustParsePrefix("10.0.0.0/8"), "private"},
		{netip.MustParsePrefix("172.16.0.0/12"), "private"},
		{netip.MustParsePrefix("192.168.0.0/16"), "private"},
		{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
		{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
		{netip.MustParsePrefix("fe80::/10"), "link-local"},
		{netip.MustParsePrefix("fc00::/7"), "unique-local"},
		{netip.MustParsePrefix("fec0::/10"), "site-local"},
	}
	// Never allowed: nothing legitimate serves MCP there.
	reservedRanges = []struct {
		p      netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (\"this network\")"},
		{netip.MustParsePrefix("::/128"), "unspecified"},
		{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
		{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
		{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
		{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
		{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
		{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
		{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
		{netip.MustParsePrefix("ff00::/8"), "multicast"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
		{netip.MustParsePrefix("100::/64"), "discard-only"},
		{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	}
	nat64  = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48")}
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// CheckAddr returns a *BlockedAddressError when a is not a public unicast
// address. IPv4 addresses embedded in IPv6 (IPv4-mapped, NAT64, 6to4) are
// judged as the IPv4 address they reach. With allowPrivate, loopback,
// private, CGNAT, link-local and unique-local addresses pass; cloud metadata
// addresses never do.
func CheckAddr(a netip.Addr, allowPrivate bool) error {
	reason, private := classify(a)
	if reason == "" || (private && allowPrivate) {
		return nil
	}
	return &BlockedAddressError{Addr: a, Reason: reason, Private: private}
}

// classify returns why a is blocked ("" when it is public) and whether it
// is merely private.
func classify(a netip.Addr) (reason string, private bool) {
	if !a.IsValid() {
		return "invalid", false
	}
	a = a.WithZone("")
	if a.Is4In6() {
		return classify(a.Unmap())
	}
	for _, m := range metadataAddrs {
		if a == m {
			return "cloud metadata", false
		}
	}
	if a.Is6() {
		b := a.As16()
		for _, p := range nat64 {
			if p.Contains(a) {
				return classify(netip.AddrFrom4([4]byte(b[12:16])))
			}
		}
		if sixTo4.Contains(a) {
			return classify(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast", false
	}
	// Private ranges first: ::1 is also inside the reserved ::/96.
	for _, r := range privateRanges {
		if r.p.Contains(a) {
			return r.reason, true
		}
	}
	for _, r := range reservedRanges {
		if r.p.Contains(a) {
			return r.reason, false
		}
	}
	return "", false
}

// checkHost is the save-and-load check of an http or sse host: literal
// addresses, names that always mean this machine or the metadata service,
// IPv4 addresses in legacy spellings, and, with a resolver, what the name
// resolves to now.
func checkHost(ctx context.Context, host string, allowPrivate bool, r Resolver) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		if err := CheckAddr(a, allowPrivate); err != nil {
			return err
		}
		return nil
	}
	if legacyIPv4(h) {
		// inet_aton accepts 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 as
		// addresses; some resolvers do too. Refuse the ambiguity.
		return &BlockedAddressError{Host: host, Reason: "an IPv4 address in a non-standard form (decimal, hex, octal or shortened); write it as four decimal numbers"}
	}
	for _, m := range metadataNames {
		if h == m {
			return &BlockedAddressError{Host: host, Reason: "a cloud metadata service name"}
		}
	}
	if (h == "localhost" || strings.HasSuffix(h, ".localhost")) && !allowPrivate {
		return &BlockedAddressError{Host: host, Reason: "a loopback name", Private: true}
	}
	if r == nil {
		return nil
	}
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return fmt.Errorf("resolve %q: %w", host, err)
	}
	for _, a := range addrs {
		if err := CheckAddr(a, allowPrivate); err != nil {
			be := err.(*BlockedAddressError)
			be.Host = host
			return be
		}
	}
	return nil
}

// legacyIPv4 reports whether h looks like an IPv4 address in one of the
// forms inet_aton accepts besides dotted decimal: one to four parts, each
// decimal, octal (leading 0) or hex (0x). Real host names never look like
// that (a top-level domain is never all digits).
func legacyIPv4(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		digits := p
		hex := false
		if len(p) > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
			digits, hex = p[2:], true
		}
		for _, c := range digits {
			isDec := c >= '0' && c <= '9'
			isHex := isDec || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
			if !isDec && !(hex && isHex) {
				return false
			}
		}
	}
	return true
}
