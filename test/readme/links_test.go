package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// link is one relative or absolute link target found in a markdown file.
type link struct {
	line   int
	target string
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// markdownLinks returns the link targets outside code blocks and code spans.
func markdownLinks(text string) []link {
	var out []link
	fence := false
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{line: n + 1, target: m[1]})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{line: n + 1, target: m[1]})
		}
	}
	return out
}

// anchors returns the anchors GitHub gives a markdown file's headings: the
// heading's text (a link's text in place of the link) lower-cased, spaces as
// hyphens, everything but letters, digits, '-' and '_' dropped, and "-1",
// "-2", … appended to repeats. Explicit <a name|id="…"> anchors count too.
func anchors(text string) map[string]bool {
	out, seen := map[string]bool{}, map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		heading := strings.TrimLeft(line, "#")
		if len(heading) == len(line) || len(line)-len(heading) > 6 || !strings.HasPrefix(heading, " ") {
			continue
		}
		heading = inlineLink.ReplaceAllStringFunc(strings.TrimSpace(heading), func(s string) string { return "" })
		heading = strings.NewReplacer("[", "", "]", "").Replace(heading)
		var slug strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocumentationLinksResolve: every relative link in the README, docs/,
// BENCHMARKS.md and the SDK READMEs reaches an existing file and, when it
// names an #anchor in a markdown file, an existing heading there.
func TestDocumentationLinksResolve(t *testing.T) {
	files := []string{"README.md", "BENCHMARKS.md"}
	for _, pattern := range []string{"docs/*.md", "sdk/*/README.md", "deploy/*.md", "deploy/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		for _, f := range m {
			rel, err := filepath.Rel(root, f)
			require.NoError(t, err)
			files = append(files, rel)
		}
	}
	require.Greater(t, len(files), 12, "README, BENCHMARKS and the docs pages")
	checked := 0
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, l := range markdownLinks(string(text)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			target := filepath.Join(root, file)
			if path != "" {
				target = filepath.Join(root, filepath.Dir(file), filepath.FromSlash(path))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: link %q: no such file", file, l.line, l.target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			body, err := os.ReadFile(target)
			require.NoError(t, err)
			if !anchors(string(body))[anchor] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", file, l.line, l.target, anchor, filepath.Base(target))
			}
		}
	}
	require.Greater(t, checked, 50, "relative links checked")
}

// TestAnchorsFollowGitHub pins the anchor rules against known headings.
func TestAnchorsFollowGitHub(t *testing.T) {
	a := anchors("# Qhronos\n## Summary: how fast is it?\n### Per-event policy: `dst`\n## Tracing cost (#26)\n" +
		"```\n# not a heading\n```\n## Tracing cost (#26)\n## Receiving deliveries in Go\n")
	for _, want := range []string{"qhronos", "summary-how-fast-is-it", "per-event-policy-dst", "tracing-cost-26",
		"tracing-cost-26-1", "receiving-deliveries-in-go"} {
		require.True(t, a[want], want)
	}
	require.False(t, a["not-a-heading"])
}
