#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dissection

/// Buffered writes to standard output: batches for files and pipes, each event at once when live.
final class OutputWriter {
    /// UTF-8 text waiting to be written. Renderers write into it in place (`Renderer.render(_:into:)`
    /// with a sink), one event at a time on one thread: no runtime exclusivity checks (a check
    /// per event otherwise).
    // The main thread's alone; while lent to a run in workers, it is reached only through the inout argument.
    @exclusivity(unchecked) var sink = ByteSink(capacity: 1 << 17)
    private let flushEachEvent: Bool
    /// What is rendered is let go, not written (the first pass of a run in two).
    private let discarding: Bool

    init(flushEachEvent: Bool, discarding: Bool = false) {
        self.flushEachEvent = flushEachEvent
        self.discarding = discarding
    }

    /// Appends text that is not an event's (the table's summaries, say).
    func append(_ text: String) {
        sink.append(text)
    }

    /// Call after each event's text has been written into `sink`.
    func eventDone() {
        eventDone(&sink)
    }

    /// `eventDone` for `sink` lent out (a run in workers writes into it for the whole run).
    func eventDone(_ sink: inout ByteSink) {
        if discarding {
            if sink.bytes.count >= 1 << 16 { sink.removeAll() }
            return
        }
        if flushEachEvent || sink.bytes.count >= 1 << 16 { Self.write(&sink) }
    }

    func flush() {
        if discarding { return sink.removeAll() }
        Self.write(&sink)
    }

    /// Writes the sink's bytes to standard output and empties it. A write that fails ends the
    /// run at once (`standardOutputFailed`); the check costs nothing until one does.
    private static func write(_ sink: inout ByteSink) {
        let bytes = sink.bytes
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var written = 0
        while written < bytes.count {
            let n = writeDescriptor(1, base + written, bytes.count - written)
            if n > 0 {
                written += n
                continue
            }
            let code = n < 0 ? errno : 0
            if code == EINTR { continue }
            standardOutputFailed(code)
        }
        sink.removeAll()
    }
}

/// Ends the run after a write to standard output failed with `code` (errno; 0 when the system
/// wrote nothing). A reader that went away (a closed pipe, where SIGPIPE is ignored; otherwise
/// the signal has ended the process already) ends it quietly, like other filters; any other
/// failure (a full disk: ENOSPC) is said once on standard error, with the system's reason, and
/// ends it with `ExitStatus.outputProblem`. Exits at once: the rest of the capture is not dissected.
func standardOutputFailed(_ code: Int32) -> Never {
    if code == EPIPE { exitProcess(ExitStatus.success) }
    warn("standard output: cannot write: " + (code == 0 ? "nothing was written" : String(cString: strerror(code))))
    exitProcess(ExitStatus.outputProblem)
}

/// Writes `text` and a newline to standard output at once (interface lists, help), unbuffered:
/// a failed write ends the run as any other (`standardOutputFailed`).
func printLine(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { p in
        var at = 0
        while at < p.count {
            let n = write(1, p.baseAddress! + at, p.count - at)
            if n < 0 {
                if errno == EINTR { continue }
                standardOutputFailed(errno)
            }
            if n == 0 { standardOutputFailed(0) }
            at += n
        }
    }
}

/// Messages for the user, on standard error.
func warn(_ message: String) {
    var line = "proto-dissect: " + message + "\n"
    line.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
}

/// The C library's write, by a name of its own: inside OutputWriter `write` is its method (and
/// `Glibc.write` exists on Linux only).
private func writeDescriptor(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
