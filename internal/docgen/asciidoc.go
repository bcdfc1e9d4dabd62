package main

import (
	"regexp"
	"strings"
)

var (
	// https://example.com[text^] or https://example.com[text]
	adocURLLink = regexp.MustCompile(`(https?://[^\s\[\]]+)\[([^\]]*)\]`)
	// xref:components/foo.adoc[text] or link:path[text]
	adocXref    = regexp.MustCompile(`\b(?:xref|link):[^\s\[\]]*\[([^\]]*)\]`)
	adocHeading = regexp.MustCompile(`^(={1,6}) (\S.*)$`)
	adocSource  = regexp.MustCompile(`^\[source(?:,\s*([A-Za-z0-9_+-]+))?[^\]]*\]$`)
)

// asciidocToMarkdown turns the AsciiDoc that Benthos component descriptions
// are written in (`== Heading`, `url[text]` links, `[source,yaml]` blocks
// delimited by `----`) into GitHub Markdown. Text that uses neither passes
// through unchanged. The shallowest heading becomes a Markdown heading of
// level top (deeper ones keep their distance to it), so that a description's
// sections nest under the page's own, whichever level its author started at.
func asciidocToMarkdown(s string, top int) string {
	lines := strings.Split(s, "\n")
	shallowest := 0
	for _, l := range lines {
		if m := adocHeading.FindStringSubmatch(l); m != nil && (shallowest == 0 || len(m[1]) < shallowest) {
			shallowest = len(m[1])
		}
	}
	out := make([]string, 0, len(lines))
	inBlock, pendingLang := false, ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if inBlock {
			if strings.TrimSpace(l) == "----" {
				out = append(out, "```")
				inBlock = false
				continue
			}
			out = append(out, l)
			continue
		}
		if m := adocSource.FindStringSubmatch(strings.TrimSpace(l)); m != nil && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "----" {
			pendingLang = m[1]
			continue
		}
		if strings.TrimSpace(l) == "----" {
			out = append(out, "```"+pendingLang)
			pendingLang = ""
			inBlock = true
			continue
		}
		if strings.HasPrefix(l, "```") {
			// An existing Markdown fence: copy it untouched.
			out = append(out, l)
			for i++; i < len(lines); i++ {
				out = append(out, lines[i])
				if strings.HasPrefix(lines[i], "```") {
					break
				}
			}
			continue
		}
		if m := adocHeading.FindStringSubmatch(l); m != nil {
			level := min(len(m[1])-shallowest+top, 6)
			out = append(out, strings.Repeat("#", level)+" "+inline(m[2]))
			continue
		}
		out = append(out, inline(l))
	}
	return strings.Join(out, "\n")
}

// inline converts AsciiDoc links on one line, leaving code spans alone.
func inline(l string) string {
	if !strings.Contains(l, "[") {
		return l
	}
	parts := strings.Split(l, "`")
	for i := 0; i < len(parts); i += 2 { // even parts are outside code spans
		p := adocURLLink.ReplaceAllStringFunc(parts[i], func(m string) string {
			sm := adocURLLink.FindStringSubmatch(m)
			text := strings.TrimSuffix(sm[2], "^")
			if text == "" {
				text = sm[1]
			}
			return "[" + text + "](" + sm[1] + ")"
		})
		parts[i] = adocXref.ReplaceAllString(p, "$1")
	}
	return strings.Join(parts, "`")
}
