#if canImport(Glibc)
import Glibc
#endif

/// Buffered writes to standard output: batches for files and pipes, each event at once when live.
final class OutputWriter {
    var buffer = ""
    private let flushEachEvent: Bool

    init(flushEachEvent: Bool) {
        self.flushEachEvent = flushEachEvent
        buffer.reserveCapacity(1 << 17)
    }

    /// Call after each event's text has been appended to `buffer`.
    func eventDone() {
        if flushEachEvent || buffer.utf8.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        var rest = buffer.utf8[...]
        while !rest.isEmpty {
            let n = rest.withContiguousStorageIfAvailable { p in Glibc.write(1, p.baseAddress, p.count) }
                ?? Array(rest).withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                // The reader went away (a closed pipe): stop quietly, like other filters do.
                exit(0)
            }
            rest = rest.dropFirst(n)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Messages for the user, on standard error.
func warn(_ message: String) {
    var line = "proto-dissect: " + message + "\n"
    line.withUTF8 { p in _ = Glibc.write(2, p.baseAddress, p.count) }
}
