// Command scan reads the Go source of a COS 418 package (never running it) and
// lists, as JSON on stdout, every place where its code does what the
// assignment never needs and an attack on the kit does: importing unsafe,
// syscall or cgo, opening files or descriptors, reading stdin, ending the
// process, naming /proc paths, embedding files, linking to other packages'
// symbols. The kit puts each in the verdict as a "touches the kit" note, with
// its file and line; the instructor decides what it means.
//
// It also lists where the package starts goroutines of its own (go
// statements): such a package may write the course's logger beside Tick(),
// and the kit then trusts its log only where the outcome agrees.
//
// Usage: scan DIR IMPORTPATH  (every .go file below DIR but *_test.go, of the
// package imported as IMPORTPATH, whose subfolders' packages it may import;
// written for redletter, run in its sandbox on the kit's copy of the package.)
//
// It works on go/parser's syntax tree, not on text: comments and strings
// cannot hide a call, a name declared in the file (a variable called os) is
// not the package, and a path built from string constants ("/pr" + "oc/self",
// through named constants too) is seen whole. It uses go/parser and go/ast
// only (no type checker), so that building it takes seconds, not minutes.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type place struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

type finding struct {
	File string `json:"file"`
	Line int    `json:"line"`
	What string `json:"what"`
	// Memory: it reaches the process's memory beyond what Go's types allow
	// (unsafe, system calls, C, links to other packages' symbols, faults made
	// panics, heap dumps): then nothing in the process is the kit's alone.
	Memory bool `json:"memory,omitempty"`
}

// memory are the notes (by the start of what they say) that reach the
// process's memory itself.
var memory = []string{"imports unsafe", "imports syscall", "imports C ", "imports runtime/cgo",
	"links to another package's symbol", "turns faults into panics", "writes a heap dump"}

// allowed are the standard packages a solution may import without a note:
// computation, formatting, synchronisation, time. Everything else is noted.
var allowed = map[string]bool{
	"bufio": true, "bytes": true, "cmp": true, "container/heap": true, "container/list": true,
	"container/ring": true, "context": true, "errors": true, "fmt": true, "hash": true,
	"hash/crc32": true, "hash/fnv": true, "iter": true, "io": true, "log": true, "maps": true,
	"math": true, "math/big": true, "math/bits": true, "math/rand": true, "math/rand/v2": true,
	"os": true, "reflect": true, "regexp": true, "runtime": true, "runtime/debug": true,
	"slices": true, "sort": true, "strconv": true, "strings": true, "sync": true,
	"sync/atomic": true, "text/tabwriter": true, "time": true, "unicode": true,
	"unicode/utf8": true, "unicode/utf16": true, "encoding/json": true, "encoding/hex": true,
	"encoding/binary": true, "crypto/sha256": true, "crypto/md5": true,
}

// imports says why an import is noted, for those worth more than the generic line.
var imports = map[string]string{
	"unsafe":        "imports unsafe: it reads and writes any memory of the process, where the kit's driver and its key are",
	"syscall":       "imports syscall: system calls reach descriptors, signals and the process's own memory",
	"C":             "imports C (cgo): C code does anything the process can",
	"runtime/cgo":   "imports runtime/cgo: C code does anything the process can",
	"os/exec":       "imports os/exec: it starts other programs",
	"os/signal":     "imports os/signal: it intercepts the signals the kit sends",
	"plugin":        "imports plugin: it loads code the kit never saw",
	"embed":         "imports embed: it puts files into the binary when it is built",
	"io/ioutil":     "imports io/ioutil: it reads and writes files by name",
	"debug/elf":     "imports debug/elf: it reads executables (its own binary)",
	"net":           "imports net: the assignment has no network",
	"runtime/pprof": "imports runtime/pprof: it writes profiles of the process",
}

// osUses says why a use of package os is noted; os names not listed here and not
// in osQuiet are noted as "uses os.X".
var osUses = map[string]string{
	"Exit":         "uses os.Exit: it ends the process, so the driver never writes its result",
	"Stdin":        "reads os.Stdin, where the kit's request to its driver comes",
	"NewFile":      "opens a descriptor by number (os.NewFile): descriptor 3 carries the driver's result",
	"Pipe":         "makes a pipe (os.Pipe): e.g. to replace the driver's stdin",
	"Open":         "opens a file (os.Open)",
	"OpenFile":     "opens a file (os.OpenFile)",
	"ReadFile":     "reads a file (os.ReadFile)",
	"Create":       "creates a file (os.Create)",
	"WriteFile":    "writes a file (os.WriteFile)",
	"ReadDir":      "lists a folder (os.ReadDir)",
	"DirFS":        "opens a folder as a file system (os.DirFS)",
	"Readlink":     "reads a link (os.Readlink)",
	"Executable":   "finds its own binary (os.Executable)",
	"StartProcess": "starts a process (os.StartProcess)",
	"FindProcess":  "finds a process to signal (os.FindProcess)",
}

var osQuiet = map[string]bool{
	"Stdout": true, "Stderr": true, "Getenv": true, "LookupEnv": true, "Environ": true,
	"Getpid": true, "Getppid": true, "Args": true, "Hostname": true, "IsNotExist": true,
	"IsExist": true, "ErrNotExist": true, "ErrExist": true, "Getpagesize": true,
}

// otherUses: functions of allowed packages that are noted anyway.
var otherUses = map[string]map[string]string{
	"log": {
		"Fatal":   "calls log.Fatal: it ends the process (os.Exit), so the driver never writes its result",
		"Fatalf":  "calls log.Fatalf: it ends the process (os.Exit), so the driver never writes its result",
		"Fatalln": "calls log.Fatalln: it ends the process (os.Exit), so the driver never writes its result",
	},
	"runtime/debug": {
		"WriteHeapDump":   "writes a heap dump (runtime/debug.WriteHeapDump): the process's memory, where the driver's key is",
		"SetPanicOnFault": "turns faults into panics (runtime/debug.SetPanicOnFault): only for reading memory it does not own",
	},
	"runtime": {
		"Goexit": "calls runtime.Goexit: it ends a goroutine (the driver's, if it runs there) without returning",
	},
}

// paths are the parts of a path that name the process itself or its descriptors.
var paths = []string{"/proc/", "/dev/fd", "/dev/stdin"}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: scan DIR IMPORTPATH")
		os.Exit(2)
	}
	root, own := os.Args[1], os.Args[2]
	byDir := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "scan:", err)
		os.Exit(1)
	}
	out := []finding{}
	var started []place
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		found, gos := scanDir(root, own, byDir[d])
		out = append(out, found...)
		started = append(started, gos...)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].File != out[b].File {
			return out[a].File < out[b].File
		}
		return out[a].Line < out[b].Line
	})
	if started == nil {
		started = []place{}
	}
	result := struct {
		Touches    []finding `json:"touches"`
		Goroutines []place   `json:"goroutines"`
	}{out, started}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		os.Exit(1)
	}
}

func scanDir(root, own string, files []string) ([]finding, []place) {
	fset := token.NewFileSet()
	var asts []*ast.File
	var out []finding
	var gos []place
	rel := func(pos token.Pos) (string, int) {
		p := fset.Position(pos)
		r, err := filepath.Rel(root, p.Filename)
		if err != nil {
			r = p.Filename
		}
		return filepath.ToSlash(r), p.Line
	}
	note := func(pos token.Pos, what string) {
		f, l := rel(pos)
		reaches := false
		for _, m := range memory {
			reaches = reaches || strings.HasPrefix(what, m)
		}
		out = append(out, finding{f, l, what, reaches})
	}
	sort.Strings(files)
	for _, f := range files {
		// A file with syntax errors still gives what it could parse; the build
		// says what is wrong with it.
		file, _ := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if file != nil {
			asts = append(asts, file)
		}
	}
	// The package's string constants, by name, for folding across its files.
	consts := map[string]ast.Expr{}
	for _, file := range asts {
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	isOwn := func(path string) bool { return path == own || strings.HasPrefix(path, own+"/") }
	for _, file := range asts {
		// Directives: //go:embed and //go:linkname (line comments, as the compiler reads them).
		for _, group := range file.Comments {
			for _, c := range group.List {
				text := c.Text
				switch {
				case strings.HasPrefix(text, "//go:embed"):
					note(c.Pos(), "embeds files into the binary ("+strings.TrimSpace(text)+")")
				case strings.HasPrefix(text, "//go:linkname"):
					note(c.Pos(), "links to another package's symbol ("+strings.TrimSpace(text)+"): the runtime's or the kit's driver's")
				}
			}
		}
		names := map[string]string{} // the names the file's imports go by -> their paths
		for _, spec := range file.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				continue
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if spec.Name != nil {
				local = spec.Name.Name
			}
			names[local] = path
			dotted := strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			switch {
			case local == ".":
				note(spec.Pos(), fmt.Sprintf("imports %q with a dot: its names then appear unqualified, so the kit cannot tell which it uses", path))
			case imports[path] != "":
				note(spec.Pos(), imports[path])
			case allowed[path] || isOwn(path):
			case dotted:
				note(spec.Pos(), fmt.Sprintf("imports %q, a package from outside the standard library", path))
			default:
				note(spec.Pos(), fmt.Sprintf("imports %q, which the assignment does not need", path))
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch e := n.(type) {
			case *ast.GoStmt:
				f, l := rel(e.Pos())
				gos = append(gos, place{f, l})
				return true
			case *ast.SelectorExpr:
				// A use of an imported name: any reference (a call, or the
				// function as a value). An identifier the parser resolved to
				// a declaration of the file (a local os) is not the package.
				id, ok := e.X.(*ast.Ident)
				if !ok || id.Obj != nil {
					return true
				}
				path, ok := names[id.Name]
				if !ok {
					return true
				}
				name := e.Sel.Name
				if path == "os" {
					if why, ok := osUses[name]; ok {
						note(e.Pos(), why)
					} else if !osQuiet[name] {
						note(e.Pos(), "uses os."+name+", which the assignment does not need")
					}
				} else if why, ok := otherUses[path][name]; ok {
					note(e.Pos(), why)
				}
				return true
			case *ast.BasicLit, *ast.BinaryExpr, *ast.Ident, *ast.ParenExpr:
				// A string constant, folded: "/pr" + "oc" + self is one path.
				v, ok := fold(e.(ast.Expr), consts, 0)
				if !ok {
					return true
				}
				for _, p := range paths {
					if strings.Contains(v, p) {
						shown := v
						if len(shown) > 60 {
							shown = shown[:60] + "..."
						}
						note(e.Pos(), fmt.Sprintf("names the path %q: the process's own memory, binary and descriptors are there", shown))
						return false
					}
				}
				return false
			}
			return true
		})
	}
	return out, gos
}

// fold evaluates a string constant expression: literals, +, parentheses and
// the package's named string constants (not through other packages).
func fold(e ast.Expr, consts map[string]ast.Expr, depth int) (string, bool) {
	if depth > 32 {
		return "", false
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return fold(x.X, consts, depth+1)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		a, ok1 := fold(x.X, consts, depth+1)
		b, ok2 := fold(x.Y, consts, depth+1)
		return a + b, ok1 && ok2
	case *ast.Ident:
		if x.Obj != nil && x.Obj.Kind != ast.Con {
			return "", false
		}
		v, ok := consts[x.Name]
		if !ok {
			return "", false
		}
		return fold(v, consts, depth+1)
	}
	return "", false
}
