import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// Output that cannot be written (a full disk: /dev/full) is an error, said once, with exit status
// 3; a reader that goes away (a closed pipe) ends the run quietly. Both end the run at once: with
// the capture coming through a pipe that stays open (more could come, as from `tcpdump -w -`),
// only the failed write can end it.

/// The text of mqtt-burst.pcap is 169 KB: more than two of the writer's 64 KiB batches, so text
/// and JSON are written while the capture is still being read, not only at the end.
private let burst = Repo.samples.appendingPathComponent("mqtt-burst.pcap").path

/// A pipe whose ends are closed in the programs started (standard input and output are dup'ed
/// copies), so that the test holds the only other copies.
private func closeOnExecPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw CocoaError(.fileWriteUnknown) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}

/// proto-dissect reading `capture` from a pipe that stays open after it, run through env(1) so
/// that SIGPIPE is what `signalHandling` says (`--default-signal=PIPE` or `--ignore-signal=PIPE`)
/// whatever the test runner's own disposition is.
private final class OpenEndedRun {
    let process = Process()
    private let feeder = Process()
    private let errPath = Scratch.directory + "open-ended-\(UInt64.random(in: 0...UInt64.max)).err"

    init(_ arguments: [String], capture: String, standardOutput: FileHandle, signalHandling: String = "--default-signal=PIPE") throws {
        let input = try closeOnExecPipe()
        defer { close(input.read); close(input.write) }
        feeder.executableURL = URL(fileURLWithPath: "/bin/sh")
        feeder.arguments = ["-c", "cat \"$0\"; exec sleep 120", capture]
        feeder.standardInput = FileHandle.nullDevice
        feeder.standardOutput = FileHandle(fileDescriptor: input.write, closeOnDealloc: false)
        feeder.standardError = FileHandle.nullDevice
        try feeder.run()
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [signalHandling, Repo.binary.path] + arguments + ["-"]
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        process.standardInput = FileHandle(fileDescriptor: input.read, closeOnDealloc: false)
        process.standardOutput = standardOutput
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
    }

    /// Waits up to `seconds` for proto-dissect to end by itself; false if it had to be killed.
    /// Its standard error, and the feeder's end, either way.
    func finish(within seconds: Double) -> (endedByItself: Bool, stderr: String) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        if feeder.isRunning { kill(feeder.processIdentifier, SIGKILL) }
        feeder.waitUntilExit()
        let stderr = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
        try? FileManager.default.removeItem(atPath: errPath)
        return (ended, stderr)
    }
}

/// Runs proto-dissect on a capture file with standard output on /dev/full.
private func dissectToFullDisk(_ arguments: [String]) throws -> RunResult {
    let errPath = Scratch.directory + "full-\(UInt64.random(in: 0...UInt64.max)).err"
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    let p = Process()
    p.executableURL = Repo.binary
    p.arguments = arguments
    p.standardInput = FileHandle.nullDevice
    guard let full = FileHandle(forWritingAtPath: "/dev/full") else { throw CocoaError(.fileNoSuchFile) }
    p.standardOutput = full
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    try p.run()
    let deadline = Date().addingTimeInterval(60)
    while p.isRunning && Date() < deadline { usleep(10_000) }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    let stderr = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
    return RunResult(status: p.terminationStatus, stdout: "", stderr: stderr, crashed: p.terminationReason == .uncaughtSignal)
}

private let fullDiskMessage = "proto-dissect: standard output: cannot write: No space left on device\n"

@Suite("Output that cannot be written")
struct OutputFailureTests {
    @Test("a full disk on standard output is said once, with the system's reason, and exits 3, in every format",
          arguments: [["--format", "text"], ["--format", "json"], ["--format", "table"], ["--brief"], ["--format", "text", "-c", "1"]])
    func fullDisk(format: [String]) throws {
        // mqtt-burst: text and JSON fail on a batch written mid-run (in workers: a complete file);
        // mqtt311-basic: its whole text fits one batch, so they fail on the final flush, as the
        // table always does.
        for capture in ["mqtt-burst.pcap", "mqtt311-basic.pcap"] {
            let r = try dissectToFullDisk(format + [Repo.samples.appendingPathComponent(capture).path])
            #expect(r.status == 3 && !r.crashed, "\(capture): status \(r.status), stderr: \(r.stderr)")
            #expect(r.stderr == fullDiskMessage, "\(capture): \(r.stderr)")
        }
    }

    @Test("listing interfaces (-D) to a full disk fails the same way")
    func fullDiskList() throws {
        let r = try dissectToFullDisk(["-D"])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr == fullDiskMessage)
    }

    @Test("a full disk ends the run at once, while the capture is still coming", arguments: ["text", "json"])
    func fullDiskStopsAtOnce(format: String) throws {
        guard let full = FileHandle(forWritingAtPath: "/dev/full") else { throw CocoaError(.fileNoSuchFile) }
        let run = try OpenEndedRun(["--format", format], capture: burst, standardOutput: full)
        let (ended, stderr) = run.finish(within: 30)
        #expect(ended, "still running with its input open: the failed write did not end the run")
        #expect(run.process.terminationStatus == 3 && run.process.terminationReason == .exit, "\(stderr)")
        #expect(stderr == fullDiskMessage)
    }

    @Test("a pipe closed early ends the run at once and quietly, whether SIGPIPE is ignored or not",
          arguments: ["--default-signal=PIPE", "--ignore-signal=PIPE"])
    func closedPipe(signalHandling: String) throws {
        let output = try closeOnExecPipe()
        let run: OpenEndedRun
        do {
            defer { close(output.write) }
            run = try OpenEndedRun(["--format", "text"], capture: burst,
                                   standardOutput: FileHandle(fileDescriptor: output.write, closeOnDealloc: false),
                                   signalHandling: signalHandling)
        }
        // Read the first line, as `head -1` would, then go away.
        var firstBytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !firstBytes.contains(UInt8(ascii: "\n")) {
            let n = read(output.read, &buffer, buffer.count)
            if n <= 0 { break }
            firstBytes += buffer[0..<n]
        }
        close(output.read)
        let (ended, stderr) = run.finish(within: 30)
        #expect(String(decoding: firstBytes, as: UTF8.self).hasPrefix("#4 "), "first line: \(String(decoding: firstBytes.prefix(200), as: UTF8.self))")
        #expect(ended, "still running with its input open: the closed pipe did not end the run")
        #expect(stderr.isEmpty, "a closed pipe is not an error to report: \(stderr)")
        if signalHandling == "--ignore-signal=PIPE" {
            // The write sees EPIPE: a quiet, successful end.
            #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 0)
        } else {
            #expect(run.process.terminationReason == .uncaughtSignal && run.process.terminationStatus == SIGPIPE)
        }
    }
}
