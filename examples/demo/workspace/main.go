package main

import "fmt"

func main() { fmt.Println("hello from the demo workspace") }
