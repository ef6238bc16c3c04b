// Package usage samples the CPU time a process has used (getrusage) and how busy the
// whole machine was meanwhile (/proc/stat, /proc/loadavg on Linux), so that a figure
// measured on a shared machine can be stated with the conditions it holds under: wall
// time alone measures the other work on the machine as much as the code.
package usage
