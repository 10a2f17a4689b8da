// go_regexp PATTERN NAME...: whether Go's regexp (RE2 syntax, as pprof compiles a profile's
// drop_frames and keep_frames) finds PATTERN in each NAME, one "1" or "0" per line. Exits 1 with
// the compile error if PATTERN is not valid there. For site_rule_test.cc: heaprec's default frame
// patterns must compile in Go and match the same names as std::regex does.
//
// go_regexp -pprof-drops DROP KEEP < NAMES: whether pprof itself (its profile package's
// RemoveUninteresting, with DROP as the profile's drop_frames and KEEP as its keep_frames) drops a
// frame of each full function name, one per line of standard input, called by a frame of the
// user's: "1" or "0" per name. pprof shortens the name its own way before matching it (it cuts the
// parameter list off), and this asks that code rather than a copy of it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-pprof-drops" {
		pprofDrops(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go_regexp PATTERN NAME... | go_regexp -pprof-drops DROP KEEP")
		os.Exit(2)
	}
	re, err := regexp.Compile(os.Args[1])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, name := range os.Args[2:] {
		if re.MatchString(name) {
			fmt.Println("1")
		} else {
			fmt.Println("0")
		}
	}
}

// One sample per name, [name's frame, the user's root frame]: pprof prunes the name's frame, and
// leaves the sample one frame long, exactly when it drops it. The root is named as no pattern
// drops a frame, native or Ruby: "<main>".
func pprofDrops(drop, keep string) {
	p := &profile.Profile{DropFrames: drop, KeepFrames: keep}
	root := &profile.Function{ID: 1, Name: "<main>"}
	rootLocation := &profile.Location{ID: 1, Line: []profile.Line{{Function: root}}}
	p.Function = append(p.Function, root)
	p.Location = append(p.Location, rootLocation)
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		id := uint64(len(p.Function) + 1)
		f := &profile.Function{ID: id, Name: scanner.Text()}
		loc := &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc, rootLocation}})
	}
	if err := p.RemoveUninteresting(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, s := range p.Sample {
		if len(s.Location) == 1 {
			fmt.Println("1")
		} else {
			fmt.Println("0")
		}
	}
}
