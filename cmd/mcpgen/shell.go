package main

import (
	"errors"
	"strings"
)

// splitCommand splits a command line into words the way a POSIX shell
// would for a simple command: blanks separate words, single quotes keep
// everything literal, double quotes keep blanks and honour \" \\ \$ \`,
// and a backslash outside quotes escapes the next character. Expansions
// ($VAR, globs, ~) are not performed: nothing here runs a shell.
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += 1 + end
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\':
			inWord = true
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			w.WriteByte(s[i])
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
