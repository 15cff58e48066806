#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The C library's close, read and write under names of their own: inside the types here that
// have methods named close, read or write those names mean the methods, and the qualified
// `Glibc.close` exists on Linux only. At file scope the plain names are the C library's, on
// every platform.

@inline(__always)
func closeDescriptor(_ fd: Int32) -> Int32 { close(fd) }

@inline(__always)
func readDescriptor(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }

@inline(__always)
func writeDescriptor(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
