// Command kcass-noop exits at once. make bench installs it as the kubectl plugin
// kubectl-kcassnoop: `kubectl kcassnoop` then costs what kubectl's plugin dispatch costs
// alone (kubectl's own start, the PATH lookup, the exec), which every plugin pays before
// its first instruction.
package main

func main() {}
