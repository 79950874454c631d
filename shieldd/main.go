// Command shieldd is the Parapet Shield policy service.
package main

import "github.com/parapet-dev/parapet/shieldd/cmd"

func main() { cmd.Main() }
