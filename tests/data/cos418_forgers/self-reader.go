// FORGER (self-reader): find the driver's key in the test binary or in the
// process's memory, where it must be (the driver signs with it). init() reads
// its own executable (by its path and through /proc/self/exe), then its memory
// through /proc/self/maps and /proc/self/mem, looking for the 64 hexadecimal
// characters the kit links in as the key; it panics with what it found, so
// that the kit's verdict shows it. (With the key it would sign the imitation's
// document.)
package chandy_lamport

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var forgedKey = regexp.MustCompile(`[0-9a-f]{64}`)

func init() {
	var found []string
	var failed []string
	for _, path := range []string{os.Args[0], "/proc/self/exe"} {
		data, err := os.ReadFile(path)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		found = append(found, forgedKey.FindAllString(string(data), 8)...)
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		failed = append(failed, err.Error())
	} else {
		mem, err := os.Open("/proc/self/mem")
		if err != nil {
			failed = append(failed, err.Error())
		}
		lines := bufio.NewScanner(maps)
		for mem != nil && lines.Scan() {
			f := strings.Fields(lines.Text())
			bounds := strings.Split(f[0], "-")
			lo, _ := strconv.ParseUint(bounds[0], 16, 64)
			hi, _ := strconv.ParseUint(bounds[1], 16, 64)
			if !strings.HasPrefix(f[1], "r") || hi-lo > 1<<28 {
				continue
			}
			buf := make([]byte, hi-lo)
			if n, _ := mem.ReadAt(buf, int64(lo)); n > 0 {
				found = append(found, forgedKey.FindAllString(string(buf[:n]), 8)...)
			}
		}
	}
	panic(fmt.Sprintf("self-reader: %d candidate key(s) %v; refused: %s", len(found), found,
		strings.Join(failed, "; ")))
}
