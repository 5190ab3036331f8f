package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// otherPrograms are flags the docs name that belong to other programs (the API server, kubectl),
// not to topoflow's worker or starter.
var otherPrograms = map[string]bool{
	"max-requests-inflight":          true,
	"max-mutating-requests-inflight": true,
	"server-side":                    true,
	"field-manager":                  true,
}

// TestLinks: every relative link in the Markdown files resolves to a file or directory of the
// repository, and a #anchor into a Markdown file names one of its headings (GitHub's anchors).
func TestLinks(t *testing.T) {
	r := repo(t)
	for _, f := range r.files {
		for _, l := range f.links {
			if err := r.resolve(f, l.target); err != nil {
				t.Errorf("%s:%d: broken link %q: %v", f.rel, l.line, l.target, err)
			}
		}
	}
}

// TestIndex: docs/README.md links to every other page under docs/.
func TestIndex(t *testing.T) {
	r := repo(t)
	var index *mdFile
	for _, f := range r.files {
		if f.rel == "docs/README.md" {
			index = f
		}
	}
	if index == nil {
		t.Fatal("docs/README.md: missing (the index of the docs)")
	}
	listed := map[string]bool{}
	for _, l := range index.links {
		p, _, _ := strings.Cut(l.target, "#")
		listed[filepath.ToSlash(filepath.Join("docs", p))] = true
	}
	for _, f := range r.files {
		if strings.HasPrefix(f.rel, "docs/") && f.rel != index.rel && !listed[f.rel] {
			t.Errorf("docs/README.md: no link to %s (the index lists every page)", f.rel)
		}
	}
}

// TestMakeTargets: every `make <target>` in code names a target of the Makefile.
func TestMakeTargets(t *testing.T) {
	r := repo(t)
	mk, err := os.ReadFile(filepath.Join(r.root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_-][A-Za-z0-9_.-]*)\s*:([^=]|$)`).FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	makeRE := regexp.MustCompile(`(?:^|[\s;&|("'])make\s+([A-Za-z0-9_][A-Za-z0-9_.-]*)`)
	for _, f := range r.files {
		for _, c := range f.code {
			for _, m := range makeRE.FindAllStringSubmatch(c.text, -1) {
				if !targets[m[1]] {
					t.Errorf("%s:%d: `make %s`: the Makefile has no target %q", f.rel, c.line, m[1], m[1])
				}
			}
		}
	}
}

// TestCommands: every `starter ...` command in code names subcommands the starter has (each
// answers --help with exit status 0 and its own usage) and flags they take; every `worker ...`
// command names flags the worker takes; every other `--flag` in code is a flag of the worker or
// of a starter command, or of another program named in otherPrograms.
func TestCommands(t *testing.T) {
	r := repo(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin+string(filepath.Separator), "./cmd/starter", "./cmd/worker")
	build.Dir = r.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/starter ./cmd/worker: %v\n%s", err, out)
	}
	h := &helper{bin: bin, seen: map[string]*help{}}

	known := map[string]bool{}
	worker, err := h.get("worker", nil)
	if err != nil {
		t.Fatalf("worker --help: %v", err)
	}
	for fl := range worker.flags {
		known[fl] = true
	}
	if err := h.walk(nil, known); err != nil {
		t.Fatalf("starter --help: %v", err)
	}

	for _, f := range r.files {
		for _, c := range f.code {
			for _, cmd := range commands(c.text) {
				for _, msg := range h.check(cmd) {
					t.Errorf("%s:%d: `%s`: %s", f.rel, c.line, strings.Join(cmd, " "), msg)
				}
			}
			if c.span {
				if m := bareFlag.FindStringSubmatch(c.text); m != nil && !known[m[1]] && !otherPrograms[m[1]] {
					t.Errorf("%s:%d: `--%s`: neither the worker nor any starter command has this flag (another program's? add it to otherPrograms in tests/docs)", f.rel, c.line, m[1])
				}
			}
		}
	}
}

// TestPaths: every path in code that starts with a top folder of the repository exists (a Go
// name after the path, as in model/topology.Decide, is allowed).
func TestPaths(t *testing.T) {
	r := repo(t)
	entries, err := os.ReadDir(r.root)
	if err != nil {
		t.Fatal(err)
	}
	var tops []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "bin" && (!strings.HasPrefix(e.Name(), ".") || e.Name() == ".ci") {
			tops = append(tops, regexp.QuoteMeta(e.Name()))
		}
	}
	pathRE := regexp.MustCompile(`^(?:` + strings.Join(tops, "|") + `)/[A-Za-z0-9_./-]*$`)
	for _, f := range r.files {
		for _, c := range f.code {
			for _, tok := range strings.Fields(c.text) {
				tok = strings.TrimLeft(tok, "([\"'")
				tok = strings.TrimRight(tok, ")]\"',.:;")
				if !pathRE.MatchString(tok) {
					continue
				}
				if !r.pathExists(tok) {
					t.Errorf("%s:%d: `%s`: no such file or directory in the repository", f.rel, c.line, tok)
				}
			}
		}
	}
}

// pathExists: the path exists, or it does once a Go name is cut off its last element
// (model/topology.Decide, model/upgrade.Ledger.Decide).
func (r *repository) pathExists(p string) bool {
	if _, err := os.Stat(filepath.Join(r.root, p)); err == nil {
		return true
	}
	dir, last := filepath.Split(strings.TrimSuffix(p, "/"))
	for i, ch := range last {
		if ch == '.' && i+1 < len(last) && unicode.IsUpper(rune(last[i+1])) {
			_, err := os.Stat(filepath.Join(r.root, dir, last[:i]))
			return err == nil
		}
	}
	return false
}

// --- the Markdown files ---

type repository struct {
	root  string
	files []*mdFile
	// anchors of Markdown files, by path relative to root, read on first use.
	mu      sync.Mutex
	anchors map[string]map[string]bool
}

type mdFile struct {
	rel   string
	links []link
	code  []code // code spans and the lines of fenced code blocks
	heads map[string]bool
}

type link struct {
	line   int
	target string
}

type code struct {
	line int
	text string
	span bool // a code span in prose, not a line of a fenced block
}

var (
	loadOnce sync.Once
	loaded   *repository
	loadErr  error
)

// repo reads README.md, CHANGELOG.md and every Markdown file under docs/.
func repo(t *testing.T) *repository {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func load() (*repository, error) {
	root, err := findRoot()
	if err != nil {
		return nil, err
	}
	r := &repository{root: root, anchors: map[string]map[string]bool{}}
	var paths []string
	for _, p := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			paths = append(paths, p)
		}
	}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		src, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		f := parse(p, string(src))
		r.files = append(r.files, f)
		r.anchors[p] = f.heads
	}
	return r, nil
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

var (
	fenceRE   = regexp.MustCompile("^\\s*(`{3,}|~{3,})")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	bareFlag  = regexp.MustCompile(`^--([a-z0-9][a-z0-9-]*)`)
)

// parse finds a Markdown file's headings, links (outside code) and code: the lines of fenced
// blocks, and code spans (which may run over a line end within a paragraph).
func parse(rel, src string) *mdFile {
	f := &mdFile{rel: rel, heads: map[string]bool{}}
	lines := strings.Split(src, "\n")
	masked := make([]string, len(lines)) // prose only: fenced blocks blanked
	var fence string
	slugs := map[string]int{}
	for i, ln := range lines {
		if fence != "" {
			if m := fenceRE.FindStringSubmatch(ln); m != nil && m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(ln[len(m[0]):]) == "" {
				fence = ""
			} else {
				f.code = append(f.code, code{line: i + 1, text: ln})
			}
			continue
		}
		if m := fenceRE.FindStringSubmatch(ln); m != nil {
			fence = m[1]
			continue
		}
		masked[i] = ln
		if m := headingRE.FindStringSubmatch(ln); m != nil {
			s := slug(m[2])
			if n, ok := slugs[s]; ok {
				slugs[s] = n + 1
				s = fmt.Sprintf("%s-%d", s, n+1)
			} else {
				slugs[s] = 0
			}
			f.heads[s] = true
		}
	}
	prose := strings.Join(masked, "\n")
	prose = f.spans(prose)
	for _, m := range linkRE.FindAllStringSubmatchIndex(prose, -1) {
		target := prose[m[4]:m[5]]
		f.links = append(f.links, link{line: 1 + strings.Count(prose[:m[0]], "\n"), target: target})
	}
	return f
}

// spans records the code spans of prose and returns prose with them blanked (line ends kept),
// so that links are looked for outside code only.
func (f *mdFile) spans(prose string) string {
	b := []byte(prose)
	run := func(i int) int {
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := run(i)
		// The closing run: the next run of exactly n backticks before a blank line.
		end := -1
		for j := i + n; j < len(b); {
			if b[j] == '\n' && j+1 < len(b) && (b[j+1] == '\n' || strings.TrimSpace(lineAt(b, j+1)) == "") {
				break
			}
			if b[j] == '`' {
				m := run(j)
				if m == n {
					end = j
					break
				}
				j += m
				continue
			}
			j++
		}
		if end < 0 {
			i += n
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(b[i+n:end]), "\n", " "))
		f.code = append(f.code, code{line: 1 + bytes.Count(b[:i], []byte("\n")), text: text, span: true})
		for k := i; k < end+n; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end + n
	}
	return string(b)
}

func lineAt(b []byte, i int) string {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return string(b[i:])
	}
	return string(b[i : i+j])
}

// slug is GitHub's anchor for a heading: the rendered text in lower case, without punctuation,
// spaces as hyphens.
func slug(heading string) string {
	heading = linkRE.ReplaceAllString(heading, "$1")
	heading = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.Mn, r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// resolve checks one link target of f.
func (r *repository) resolve(f *mdFile, target string) error {
	if target == "" {
		return fmt.Errorf("empty target")
	}
	if strings.HasPrefix(target, "//") || regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`).MatchString(target) {
		return nil // a URL: not checked here
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return err
	}
	rel := f.rel
	if p != "" {
		if strings.HasPrefix(p, "/") {
			rel = strings.TrimPrefix(p, "/")
		} else {
			rel = filepath.ToSlash(filepath.Join(filepath.Dir(f.rel), p))
		}
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := os.Stat(filepath.Join(r.root, rel)); err != nil {
			return fmt.Errorf("no file or directory %s", rel)
		}
	}
	if anchor == "" || !strings.HasSuffix(rel, ".md") {
		return nil
	}
	heads, err := r.headings(rel)
	if err != nil {
		return err
	}
	if !heads[anchor] {
		var have []string
		for h := range heads {
			have = append(have, "#"+h)
		}
		sort.Strings(have)
		return fmt.Errorf("%s has no heading with the anchor #%s (it has: %s)", rel, anchor, strings.Join(have, " "))
	}
	return nil
}

func (r *repository) headings(rel string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.anchors[rel]; ok {
		return h, nil
	}
	src, err := os.ReadFile(filepath.Join(r.root, rel))
	if err != nil {
		return nil, err
	}
	h := parse(rel, string(src)).heads
	r.anchors[rel] = h
	return h, nil
}

// --- the commands ---

var (
	commandStart = regexp.MustCompile(`^(?:\S*/)?(starter|worker)$`)
	wordAlts     = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)
)

// commands finds the starter and worker commands in one piece of code: a code span that is a
// command, or the commands of a line of a code block (a leading "$ " prompt, a trailing comment,
// and && ; | between commands).
func commands(text string) [][]string {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "$ "))
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	var out [][]string
	for _, part := range regexp.MustCompile(`&&|;| \| `).Split(text, -1) {
		fields := strings.Fields(part)
		if len(fields) > 0 && commandStart.MatchString(fields[0]) {
			out = append(out, append([]string{commandStart.FindStringSubmatch(fields[0])[1]}, fields[1:]...))
		}
	}
	return out
}

type help struct {
	subcommands map[string]bool
	flags       map[string]bool // long names, and one-letter short names with one dash: "-o"
}

type helper struct {
	bin  string
	mu   sync.Mutex
	seen map[string]*help
}

// get runs `<program> <path...> --help`: it must exit 0 and show the usage of exactly that
// command (cobra shows the nearest command's help for an unknown subcommand).
func (h *helper) get(program string, path []string) (*help, error) {
	key := strings.Join(append([]string{program}, path...), " ")
	h.mu.Lock()
	defer h.mu.Unlock()
	if got, ok := h.seen[key]; ok {
		if got == nil {
			return nil, fmt.Errorf("%s --help failed", key)
		}
		return got, nil
	}
	h.seen[key] = nil
	cmd := exec.Command(filepath.Join(h.bin, program), append(slices.Clone(path), "--help")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s --help: %v\n%s", key, err, out)
	}
	got := &help{subcommands: map[string]bool{}, flags: map[string]bool{}}
	usage, section := "", ""
	flagRE := regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][A-Za-z0-9-]*)`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		ln := sc.Text()
		switch {
		case strings.HasSuffix(ln, ":") && !strings.HasPrefix(ln, " "):
			section = ln
			continue
		case strings.TrimSpace(ln) == "":
			if section != "Usage:" || usage != "" {
				section = ""
			}
			continue
		}
		switch section {
		case "Usage:":
			if usage == "" {
				usage = strings.TrimSpace(ln)
			}
		case "Available Commands:":
			if f := strings.Fields(ln); len(f) > 0 && f[0] != "help" && f[0] != "completion" {
				got.subcommands[f[0]] = true
			}
		case "Flags:", "Global Flags:":
			if m := flagRE.FindStringSubmatch(ln); m != nil {
				got.flags[m[2]] = true
				if m[1] != "" {
					got.flags["-"+m[1]] = true
				}
			}
		}
	}
	if usage != key && !strings.HasPrefix(usage, key+" ") {
		return nil, fmt.Errorf("%s --help shows the usage %q: no such command", key, usage)
	}
	h.seen[key] = got
	return got, nil
}

// walk adds the flags of every starter command to known.
func (h *helper) walk(path []string, known map[string]bool) error {
	got, err := h.get("starter", path)
	if err != nil {
		return err
	}
	for fl := range got.flags {
		if !strings.HasPrefix(fl, "-") {
			known[fl] = true
		}
	}
	for sub := range got.subcommands {
		if err := h.walk(append(slices.Clone(path), sub), known); err != nil {
			return err
		}
	}
	return nil
}

// check reports what is wrong with one documented command (program and arguments).
func (h *helper) check(cmd []string) []string {
	program, args := cmd[0], cmd[1:]
	var path []string
	i := 0
	if program == "starter" {
		for ; i < len(args) && wordAlts.MatchString(args[i]); i++ {
			got, err := h.get(program, path)
			if err != nil {
				return []string{err.Error()}
			}
			if len(got.subcommands) == 0 {
				break // positional arguments from here
			}
			alts := strings.Split(args[i], "|")
			for _, a := range alts {
				if !got.subcommands[a] {
					return []string{fmt.Sprintf("%s has no subcommand %q (it has: %s)",
						strings.Join(append([]string{program}, path...), " "), a, strings.Join(sortedKeys(got.subcommands), ", "))}
				}
				if _, err := h.get(program, append(slices.Clone(path), a)); err != nil {
					return []string{err.Error()}
				}
			}
			path = append(path, alts[0])
		}
	}
	got, err := h.get(program, path)
	if err != nil {
		return []string{err.Error()}
	}
	var msgs []string
	name := strings.Join(append([]string{program}, path...), " ")
	for _, a := range args[i:] {
		a = strings.Trim(a, "[]()")
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			fl, _, _ := strings.Cut(a[2:], "=")
			if !got.flags[fl] {
				msgs = append(msgs, fmt.Sprintf("%s has no flag --%s", name, fl))
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			fl, _, _ := strings.Cut(a, "=")
			if len(fl) != 2 || !got.flags[fl] {
				msgs = append(msgs, fmt.Sprintf("%s has no flag %s", name, fl))
			}
		}
	}
	return msgs
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
