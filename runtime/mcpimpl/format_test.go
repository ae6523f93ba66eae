package mcpimpl

import "testing"

// TestValidFormatSuite runs ValidFormat over the string cases of the
// JSON-Schema-Test-Suite (tests/draft2020-12/optional/format: date,
// date-time, email, uri, uuid; each case's description after it), then
// cases of the RFCs the suite does not have.
func TestValidFormatSuite(t *testing.T) {
	for _, tc := range []struct {
		format, s string
		ok        bool
	}{
		{"date", "1963-06-19", true},                                // a valid date string
		{"date", "2020-01-31", true},                                // a valid date string with 31 days in January
		{"date", "2020-01-32", false},                               // a invalid date string with 32 days in January
		{"date", "2021-02-28", true},                                // a valid date string with 28 days in February (normal)
		{"date", "2020-02-30", false},                               // a invalid date string with 30 days in February (leap)
		{"date", "2020-03-31", true},                                // a valid date string with 31 days in March
		{"date", "2020-03-32", false},                               // a invalid date string with 32 days in March
		{"date", "2020-04-30", true},                                // a valid date string with 30 days in April
		{"date", "2020-04-31", false},                               // a invalid date string with 31 days in April
		{"date", "2020-05-31", true},                                // a valid date string with 31 days in May
		{"date", "2020-05-32", false},                               // a invalid date string with 32 days in May
		{"date", "2020-06-30", true},                                // a valid date string with 30 days in June
		{"date", "2020-06-31", false},                               // a invalid date string with 31 days in June
		{"date", "2020-07-31", true},                                // a valid date string with 31 days in July
		{"date", "2020-07-32", false},                               // a invalid date string with 32 days in July
		{"date", "2020-08-31", true},                                // a valid date string with 31 days in August
		{"date", "2020-08-32", false},                               // a invalid date string with 32 days in August
		{"date", "2020-09-30", true},                                // a valid date string with 30 days in September
		{"date", "2020-09-31", false},                               // a invalid date string with 31 days in September
		{"date", "2020-10-31", true},                                // a valid date string with 31 days in October
		{"date", "2020-10-32", false},                               // a invalid date string with 32 days in October
		{"date", "2020-11-30", true},                                // a valid date string with 30 days in November
		{"date", "2020-11-31", false},                               // a invalid date string with 31 days in November
		{"date", "2020-12-31", true},                                // a valid date string with 31 days in December
		{"date", "2020-12-32", false},                               // a invalid date string with 32 days in December
		{"date", "06/19/1963", false},                               // an invalid date string
		{"date", "2013-350", false},                                 // only RFC3339 not all of ISO 8601 are valid
		{"date", "1998-1-20", false},                                // non-padded month dates are not valid
		{"date", "1998-01-1", false},                                // non-padded day dates are not valid
		{"date", "1998-13-01", false},                               // invalid month
		{"date", "2021-02-29", false},                               // 2021 is not a leap year
		{"date", "2020-02-29", true},                                // 2020 is a leap year
		{"date", "1963-06-1\u09ea", false},                          // invalid non-ASCII '৪' (a Bengali 4)
		{"date", "2020-0\u09ea-01", false},                          // invalid: non-ASCII Bengali digit in month field
		{"date", "20230328", false},                                 // ISO8601 / non-RFC3339: YYYYMMDD without dashes (2023-03-28)
		{"date", "2023-W01", false},                                 // ISO8601 / non-RFC3339: week number implicit day of week (2023-01-02)
		{"date", "2023-W13-2", false},                               // ISO8601 / non-RFC3339: week number with day of week (2023-03-28)
		{"date", "2022W527", false},                                 // ISO8601 / non-RFC3339: week number rollover to next year (2023-01-01)
		{"date", "2020-11-28T23:55:45Z", false},                     // an invalid time string in date-time format
		{"date", "0100-02-29", false},                               // century year 0100 is not a leap year
		{"date", "0400-02-29", true},                                // century year 0400 is a leap year
		{"date", "2100-02-29", false},                               // century year 2100 is not a leap year
		{"date", " 2024-01-15", false},                              // invalid: leading whitespace is not permitted
		{"date", "2024-01-15 ", false},                              // invalid: trailing whitespace is not permitted
		{"date", "2024-00-15", false},                               // invalid: month 00 is not valid per date-month range 01-12
		{"date", "2024-01-00", false},                               // invalid: day 00 is not valid per date-mday minimum of 01
		{"date", "", false},                                         // invalid: empty string
		{"date", "2020 -01-01", false},                              // invalid: embedded whitespace between year and month
		{"date", "2020-01-01X", false},                              // invalid: trailing character after valid full-date
		{"date", "2020-01-01Z", false},                              // invalid: trailing Z after full-date
		{"date", "2020-01-01 00:00:00Z", false},                     // invalid: full-date followed by space and time component
		{"date", "0001-01-01", true},                                // valid: four-digit year 0001
		{"date", "20-01-01", false},                                 // invalid: two-digit year (N-2 digits)
		{"date", "998-01-01", false},                                // invalid: three-digit year (N-1 digits)
		{"date", "12020-01-01", false},                              // invalid: five-digit year (N+1 digits)
		{"date", "+2020-01-01", false},                              // invalid: positive sign prefix on year
		{"date", "-2020-01-01", false},                              // invalid: negative sign prefix on year
		{"date", "\u09e8020-01-01", false},                          // invalid: non-ASCII Bengali digit in year field
		{"date", "YYYY-01-01", false},                               // invalid: alphabetic characters in year field
		{"date", "2020-001-01", false},                              // invalid: three-digit month (N+1 digits)
		{"date", "2020-MM-01", false},                               // invalid: alphabetic characters in month field
		{"date", "2020-01-001", false},                              // invalid: three-digit day (N+1 digits)
		{"date", "2020-01-DD", false},                               // invalid: alphabetic characters in day field
		{"date", "2020:01:01", false},                               // invalid: colon separators
		{"date", "2020.01.01", false},                               // invalid: dot separators
		{"date", "2020 01 01", false},                               // invalid: space separators
		{"date", "2020-01/01", false},                               // invalid: mixed slash and hyphen separators
		{"date", "2020--01-01", false},                              // invalid: duplicated first hyphen
		{"date", "2020-01--01", false},                              // invalid: duplicated second hyphen
		{"date", "1582-10-10", true},                                // valid: date inside the Julian to Gregorian reform gap
		{"date", "2147483648-01-01", false},                         // invalid: year field numerically larger than a 32-bit signed integer
		{"date", "2020-01-0:", false},                               // invalid: character just above '9' as the second digit of the day
		{"date", "\u09e80-01-01", false},                            // invalid: non-ASCII digit leaving ten UTF-8 bytes but eight characters
		{"date", "2020\u201301\u201301", false},                     // invalid: en dash separators instead of hyphen-minus
		{"date", "2020-01-01\u0000", false},                         // invalid: NUL character after an otherwise valid full-date
		{"date-time", "1963-06-19T08:30:06.283185Z", true},          // a valid date-time string
		{"date-time", "1963-06-19T08:30:06Z", true},                 // a valid date-time string without second fraction
		{"date-time", "1937-01-01T12:00:27.87+00:20", true},         // a valid date-time string with plus offset
		{"date-time", "1990-12-31T15:59:50.123-08:00", true},        // a valid date-time string with minus offset
		{"date-time", "1998-12-31T23:59:60Z", true},                 // a valid date-time with a leap second, UTC
		{"date-time", "1998-12-31T15:59:60.123-08:00", true},        // a valid date-time with a leap second, with minus offset
		{"date-time", "1998-12-31T23:59:61Z", false},                // an invalid date-time past leap second, UTC
		{"date-time", "1998-12-31T23:58:60Z", false},                // an invalid date-time with leap second on a wrong minute, UTC
		{"date-time", "1998-12-31T22:59:60Z", false},                // an invalid date-time with leap second on a wrong hour, UTC
		{"date-time", "1990-02-31T15:59:59.123-08:00", false},       // an invalid day in date-time string
		{"date-time", "1990-12-31T15:59:59-24:00", false},           // an invalid offset in date-time string
		{"date-time", "1963-06-19T08:30:06.28123+01:00Z", false},    // an invalid closing Z after time-zone offset
		{"date-time", "1990-12-31T24:00:00Z", false},                // an invalid hour in date-time string
		{"date-time", "1990-12-31T15:60:00Z", false},                // an invalid minute in date-time string
		{"date-time", "1990-12-31T10:00:00+10:60", false},           // an invalid offset minute in date-time string
		{"date-time", "06/19/1963 08:30:06 PST", false},             // an invalid date-time string
		{"date-time", "1963-06-19t08:30:06.283185z", true},          // case-insensitive T and Z
		{"date-time", "2013-350T01:01:01", false},                   // only RFC3339 not all of ISO 8601 are valid
		{"date-time", "1963-6-19T08:30:06.283185Z", false},          // invalid non-padded month dates
		{"date-time", "1963-06-1T08:30:06.283185Z", false},          // invalid non-padded day dates
		{"date-time", "1963-06-1\u09eaT00:00:00Z", false},           // invalid non-ASCII '৪' (a Bengali 4) in date portion
		{"date-time", "1963-06-11T0\u09ea:00:00Z", false},           // invalid non-ASCII '৪' (a Bengali 4) in time portion
		{"date-time", "+11963-06-19T08:30:06.283185Z", false},       // invalid extended year
		{"date-time", "1985-04-12T23:20:50+01", false},              // a numeric offset without minutes is invalid
		{"date-time", "2016-12-31T24:59:60+01:00", false},           // hour 24 is invalid even with a leap second
		{"date-time", "1985-04-12T00:59:59.999999999999999Z", true}, // a second fraction of fifteen nines is valid
		{"date-time", "1985-04-12T23:20:50Z\n", false},              // a trailing newline is invalid
		{"email", "joe.bloggs@example.com", true},                   // a valid e-mail address
		{"email", "2962", false},                                    // an invalid e-mail address
		{"email", "te~st@example.com", true},                        // tilde in local part is valid
		{"email", "~test@example.com", true},                        // tilde before local part is valid
		{"email", "test~@example.com", true},                        // tilde after local part is valid
		{"email", "\"joe bloggs\"@example.com", true},               // a quoted string with a space in the local part is valid
		{"email", "\"joe..bloggs\"@example.com", true},              // a quoted string with a double dot in the local part is valid
		{"email", "\"joe@bloggs\"@example.com", true},               // a quoted string with a @ in the local part is valid
		{"email", "joe.bloggs@[127.0.0.1]", true},                   // an IPv4-address-literal after the @ is valid
		{"email", "joe.bloggs@[IPv6:::1]", true},                    // an IPv6-address-literal after the @ is valid
		{"email", ".test@example.com", false},                       // dot before local part is not valid
		{"email", "test.@example.com", false},                       // dot after local part is not valid
		{"email", "te.s.t@example.com", true},                       // two separated dots inside local part are valid
		{"email", "te..st@example.com", false},                      // two subsequent dots inside local part are not valid
		{"email", "joe.bloggs@invalid=domain.com", false},           // an invalid domain
		{"email", "joe.bloggs@[127.0.0.300]", false},                // an invalid IPv4-address-literal
		{"email", "user1@oceania.org, user2@oceania.org", false},    // two email addresses is not valid
		{"email", "\"Winston Smith\" <winston.smith@recdep.minitrue> (Records Department)", false}, // full "From" header is invalid
		{"email", "@example.com", false},                                     // local part is required
		{"email", "joe.bloggs@", false},                                      // domain is required
		{"email", "joe bloggs@example.com", false},                           // unquoted space in local part is invalid
		{"uri", "http://foo.bar/?baz=qux#quux", true},                        // a valid URL with anchor tag
		{"uri", "http://foo.com/blah_(wikipedia)_blah#cite-1", true},         // a valid URL with anchor tag and parentheses
		{"uri", "http://foo.bar/?q=Test%20URL-encoded%20stuff", true},        // a valid URL with URL-encoded stuff
		{"uri", "http://xn--nw2a.xn--j6w193g/", true},                        // a valid puny-coded URL
		{"uri", "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com", true},  // a valid URL with many special characters
		{"uri", "http://223.255.255.254", true},                              // a valid URL based on IPv4
		{"uri", "ftp://ftp.is.co.za/rfc/rfc1808.txt", true},                  // a valid URL with ftp scheme
		{"uri", "http://www.ietf.org/rfc/rfc2396.txt", true},                 // a valid URL for a simple text file
		{"uri", "ldap://[2001:db8::7]/c=GB?objectClass?one", true},           // a valid URL
		{"uri", "mailto:John.Doe@example.com", true},                         // a valid mailto URI
		{"uri", "news:comp.infosystems.www.servers.unix", true},              // a valid newsgroup URI
		{"uri", "tel:+1-816-555-1212", true},                                 // a valid tel URI
		{"uri", "urn:oasis:names:specification:docbook:dtd:xml:4.1.2", true}, // a valid URN
		{"uri", "//foo.bar/?baz=qux#quux", false},                            // an invalid protocol-relative URI Reference
		{"uri", "/abc", false},                                               // an invalid relative URI Reference
		{"uri", "\\\\WINDOWS\\fileshare", false},                             // an invalid URI
		{"uri", "abc", false},                                                // an invalid URI though valid URI reference
		{"uri", "http:// shouldfail.com", false},                             // an invalid URI with spaces
		{"uri", ":// should fail", false},                                    // an invalid URI with spaces and missing scheme
		{"uri", "bar,baz:foo", false},                                        // an invalid URI with comma in scheme
		{"uri", "https://[@example.org/test.txt", false},                     // invalid userinfo
		{"uri", "https://example.org/foobar\u00ae.txt", false},               // unescaped non US-ASCII characters
		{"uri", "https://example.org/foobar\\.txt", false},                   // invalid backslash character
		{"uri", "https://example.org/foobar\".txt", false},                   // invalid " character
		{"uri", "https://example.org/foobar<>.txt", false},                   // invalid <> characters
		{"uri", "https://example.org/foobar{}.txt", false},                   // invalid {} characters
		{"uri", "https://example.org/foobar^.txt", false},                    // invalid ^ character
		{"uri", "https://example.org/foobar`.txt", false},                    // invalid ` character
		{"uri", "https://example.org/foo bar.txt", false},                    // invalid SPACE character
		{"uri", "https://example.org/foobar|.txt", false},                    // invalid | character
		{"uri", "http://087.10.0.1/", true},                                  // URI with leading-zero IPv4 is structurally valid as a reg-name
		{"uri", "http://999.999.999.999/", true},                             // URI with out-of-bounds IPv4 is structurally valid as a reg-name
		{"uri", "http://example.com/%6G", false},                             // invalid percent-encoding with non-hex digits
		{"uri", "http://example.com/%A", false},                              // incomplete percent-encoding triplet
		{"uri", "http://example.com/%", false},                               // lone percent sign is invalid
		{"uri", "1http://example.com", false},                                // scheme must start with a letter
		{"uri", "ht_tp://example.com", false},                                // invalid character in scheme
		{"uri", "http://example.com:abc/path", false},                        // non-numeric port is invalid
		{"uri", "http://[::ffff:01.2.3.4]", false},                           // leading zero in an embedded IPv4 address is invalid
		{"uri", "http:/[::1]", false},                                        // square brackets are not allowed in a path segment
		{"uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", true},               // all upper-case
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", true},               // all lower-case
		{"uuid", "2eb8aa08-AA98-11ea-B4Aa-73B441D16380", true},               // mixed case
		{"uuid", "00000000-0000-0000-0000-000000000000", true},               // all zeroes is valid
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", false},               // wrong length
		{"uuid", "2eb8aa08-aa98-11ea-73b441d16380", false},                   // missing section
		{"uuid", "2eb8aa08-aa98-11ea-b4ga-73b441d16380", false},              // bad characters (not hex)
		{"uuid", "2eb8aa08aa9811eab4aa73b441d16380", false},                  // no dashes
		{"uuid", "2eb8aa08aa98-11ea-b4aa73b441d16380", false},                // too few dashes
		{"uuid", "2eb8-aa08-aa98-11ea-b4aa73b44-1d16380", false},             // too many dashes
		{"uuid", "2eb8aa08aa9811eab4aa73b441d16380----", false},              // dashes in the wrong spot
		{"uuid", "2eb8aa0-8aa98-11e-ab4aa7-3b441d16380", false},              // shifted dashes
		{"uuid", "98d80576-482e-427f-8434-7f86890ab222", true},               // valid version 4
		{"uuid", "99c17cbb-656f-564a-940f-1a4568f03487", true},               // valid version 5
		{"uuid", "99c17cbb-656f-664a-940f-1a4568f03487", true},               // hypothetical version 6
		{"uuid", "99c17cbb-656f-f64a-940f-1a4568f03487", true},               // hypothetical version 15
		{"uuid", "urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380", false},     // URN prefixed UUID is invalid
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380-", false},             // trailing hyphen after a complete UUID is invalid
		{"uuid", "\u09e8eb8aa08-aa98-11ea-b4aa-73b441d16380", false},         // non-ASCII digit '২' (a Bengali 2) is invalid
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1_380", false},              // an underscore in place of a hex digit is invalid
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380\n", false},            // a trailing newline after a complete UUID is invalid
		{"uuid", "2eb8aa08-aa98-11ea-f4aa-73b441d16380", true},               // a variant nibble not defined by RFC 4122 is valid

		// RFC 3339 §5.7: a leap second ends a month, 23:59:60 in UTC.
		{"date-time", "1990-12-31T23:59:60Z", true},
		{"date-time", "2016-06-30T23:59:60Z", true},
		{"date-time", "2017-01-01T00:59:60+01:00", true},
		{"date-time", "1998-12-30T23:59:60Z", false},
		{"date-time", "1998-12-31T23:59:60+00:30", false},
		{"date-time", "1998-12-31T23:59:59.Z", false},
		{"date-time", "1998-12-31T23:59:59-00:00", true},
		// RFC 5321 §4.1.2: quoted-string local parts, with quoted pairs;
		// address literals.
		{"email", `"john doe"@example.com`, true},
		{"email", `"a\"b\\c"@example.com`, true},
		{"email", `""@example.com`, true},
		{"email", `"unterminated@example.com`, false},
		{"email", `"a"b@example.com`, false},
		{"email", "a@localhost", true},
		{"email", "a@-x.example", false},
		{"email", "a@[tag:content]", false},
		{"email", "a@[IPv6:fe80::1%eth0]", false},
		{"email", "a@example.com.", false},
		// RFC 3986: IPvFuture, empty ports and paths, fragments.
		{"uri", "http://[v7.a:b]/", true},
		{"uri", "http://[v7.]/", false},
		{"uri", "http://x.example:/", true},
		{"uri", "file:///etc/hosts", true},
		{"uri", "a:", true},
		{"uri", "http://x.example/#a#b", false},
		{"uri", "http://[fe80::1%25eth0]/", false},
		// Other formats are not checked.
		{"hostname", "anything at all", true},
	} {
		if got := ValidFormat(tc.format, tc.s); got != tc.ok {
			t.Errorf("ValidFormat(%q, %q) = %v, want %v", tc.format, tc.s, got, tc.ok)
		}
	}
}
