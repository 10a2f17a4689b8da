// go_regexp PATTERN NAME...: whether Go's regexp (RE2 syntax, as pprof compiles a profile's
// drop_frames and keep_frames) finds PATTERN in each NAME, one "1" or "0" per line. Exits 1 with
// the compile error if PATTERN is not valid there. For site_rule_test.cc: heaprec's default frame
// patterns must compile in Go and match the same names as std::regex does.
package main

import (
	"fmt"
	"os"
	"regexp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go_regexp PATTERN NAME...")
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
