package main

import (
	"os"
	"syscall"
	"unsafe"
)

// ttyDriver reports whether f is a terminal: the terminal driver answers
// TCGETS only for one.
func ttyDriver(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
