package ident

import "testing"

func TestIdent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"user_id", "UserID"},
		{"userId", "UserID"},
		{"UserID", "UserID"},
		{"API-get-user", "APIGetUser"},
		{"ns.tool/v2", "NsToolV2"},
		{"get-resource-links", "GetResourceLinks"},
		{"HTTPServer", "HTTPServer"},
		{"XMLHttpRequest", "XMLHTTPRequest"},
		{"2fa_code", "X2faCode"},
		{"type", "Type"},
		{"json", "JSON"},
		{"mcpruntime", "Mcpruntime"},
		{"ids", "IDs"},
		{"urls", "URLs"},
		{"é_clair", "ÉClair"},
		{"日本", "X日本"},
		{"", ""},
		{"  ", ""},
		{" ", ""},
		{"a b", "AB"},
		{"oauth2Token", "Oauth2Token"},
		{"FOO_BAR", "FooBar"},
		{"htmlURLs", "HTMLURLs"},
		{"userIDs", "UserIDs"},
		{"IDsOnly", "IDsOnly"},
		{"$type", "DollarType"},
		{"@context", "AtContext"},
		{"-", "Dash"},
		{"+1", "Plus1"},
		{"-1", "Minus1"},
		{"c++", "CPlusPlus"},
		{"_meta", "Meta"},
		{"_", "Underscore"},
		{"a-b", "AB"},
		{"__typename", "Typename"},
		{"€", "U20AC"},
		{">=", "GtEq"},
		{"x-go-name", "XGoName"},
	} {
		if got := Ident(c.in); got != c.want {
			t.Errorf("Ident(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestValid(t *testing.T) {
	if !Valid("Foo_1") || Valid("foo") || Valid("") || Valid("A-b") {
		t.Fatal("Valid")
	}
}
