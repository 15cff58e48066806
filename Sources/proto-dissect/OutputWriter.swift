#if canImport(Glibc)
import Glibc
#endif

/// Buffered writes to standard output: batches for files and pipes, each event at once when live.
final class OutputWriter {
    /// UTF-8 text waiting to be written. Renderers write into it in place, one event at a time on
    /// one thread: no runtime exclusivity checks (a check per event otherwise).
    @exclusivity(unchecked) var bytes: [UInt8] = []
    private let flushEachEvent: Bool

    init(flushEachEvent: Bool) {
        self.flushEachEvent = flushEachEvent
        bytes.reserveCapacity(1 << 17)
    }

    /// Appends text that is not an event's (the table's summaries, say).
    func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Call after each event's text has been appended to `bytes`.
    func eventDone() {
        if flushEachEvent || bytes.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !bytes.isEmpty else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { p in Glibc.write(1, p.baseAddress! + written, p.count - written) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                // The reader went away (a closed pipe): stop quietly, like other filters do.
                exit(0)
            }
            written += n
        }
        bytes.removeAll(keepingCapacity: true)
    }
}

/// Messages for the user, on standard error.
func warn(_ message: String) {
    var line = "proto-dissect: " + message + "\n"
    line.withUTF8 { p in _ = Glibc.write(2, p.baseAddress, p.count) }
}
