#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered sequential reads from a file descriptor: works on pipes (standard input) as on files.
struct ByteStream {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var eof = false
    /// Bytes consumed so far, for messages.
    private(set) var position = 0

    init(fd: Int32, ownsDescriptor: Bool, chunk: Int = 1 << 20) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.buffer = [UInt8](repeating: 0, count: chunk)
    }

    /// Reads from bytes held in memory (tests, fuzzing).
    init(bytes: [UInt8]) {
        fd = -1
        ownsDescriptor = false
        buffer = bytes
        end = bytes.count
        eof = true
    }

    func close() {
        if ownsDescriptor { _ = closeDescriptor(fd) }
    }

    var available: Int { end - start }

    /// Makes at least `count` bytes available unless the input ends first. Returns the count available.
    @inline(__always) mutating func fill(_ count: Int) throws -> Int {
        // Most calls find the bytes already read (the buffer holds a megabyte): no call then.
        if end - start >= count { return count }
        return try refill(count)
    }

    private mutating func refill(_ count: Int) throws -> Int {
        while available < count && !eof {
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { p in
                    guard let base = p.baseAddress else { return }
                    memmove(base, base + start, end - start)
                }
                end -= start
                start = 0
            }
            if buffer.count - end < count - available {
                buffer.append(contentsOf: [UInt8](repeating: 0, count: max(count - available, buffer.count)))
            }
            let room = buffer.count - end
            let n = buffer.withUnsafeMutableBufferPointer { p in readDescriptor(fd, p.baseAddress! + end, room) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.unreadable, source: "", String(cString: strerror(errno)))
            }
            if n == 0 { eof = true } else { end += n }
        }
        return min(available, count)
    }

    /// The next `count` bytes, copied out (the buffer is reused).
    mutating func read(_ count: Int) -> [UInt8] {
        let n = min(count, available)
        // Copied from the buffer's memory: an array made from a slice of the buffer retained
        // and released the buffer per packet.
        let from = start
        let out = buffer.withUnsafeBufferPointer { b in Array(UnsafeBufferPointer(rebasing: b[from..<(from + n)])) }
        start += n
        position += n
        return out
    }

    mutating func skip(_ count: Int) {
        let n = min(count, available)
        start += n
        position += n
    }

    func peek(_ count: Int) -> ArraySlice<UInt8> {
        buffer[start..<(start + min(count, available))]
    }

    /// The next `count` bytes (or fewer, at the end), read where they are in the buffer and not
    /// consumed. The view lives only inside `body`: one kept past the next `fill` would make that
    /// fill copy the whole buffer.
    func withPeek<R>(_ count: Int, _ body: (ArraySlice<UInt8>) throws -> R) rethrows -> R {
        try body(buffer[start..<(start + min(count, available))])
    }

    /// Discards whole input up to `count` bytes, in bounded chunks (never allocates `count`).
    mutating func discard(_ count: Int) throws -> Int {
        var left = count
        while left > 0 {
            let got = try fill(min(left, 1 << 20))
            if got == 0 { break }
            skip(got)
            left -= got
        }
        return count - left
    }
}
