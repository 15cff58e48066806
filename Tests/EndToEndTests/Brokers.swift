import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Real brokers for the live tests. Each starts beside whatever already runs on the machine (a
// developer's own mosquitto on 1883, a RabbitMQ as rabbit@localhost on 5672): a free port of its
// own, and for RabbitMQ a node name, distribution port, cookie and directories of its own
// (scripts/brokers.sh). A broker that truly cannot start fails the test with the end of its log.
//
// Port ranges, all below the kernel's ephemeral ports (32768 up), so that a probe's own source
// port is never a broker's, and apart from each other: mosquitto 21000-25999, RabbitMQ
// distribution 26000-28999 (chosen by brokers.sh), AMQP 29001-32000.

/// A real mosquitto on 127.0.0.1 for the duration of a test.
final class Mosquitto {
    let port: UInt16
    let dir: URL
    private let process: Process

    init() throws {
        var failure = ""
        // Another program may take the port between the check and mosquitto's bind: try another.
        for _ in 0..<3 {
            let port = try freeLoopbackPort(in: 21_000...25_999)
            let dir = URL(fileURLWithPath: Scratch.directory).appendingPathComponent("mosq-\(port)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let conf = dir.appendingPathComponent("mosquitto.conf"), log = dir.appendingPathComponent("mosquitto.log")
            try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\nlog_dest stderr\n"
                .write(to: conf, atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
            process.arguments = ["-c", conf.path]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            if waitUntilListening(port, by: process, seconds: 10) {
                self.port = port
                self.dir = dir
                self.process = process
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            failure = "mosquitto could not start on 127.0.0.1:\(port) (exit status \(process.terminationStatus)); "
                + "the end of its log:\n" + tail(of: log.path)
            try? FileManager.default.removeItem(at: dir)
            guard failure.contains("in use") else { break }
        }
        throw LiveTestError(failure)
    }

    func stop() {
        // SIGKILL: a signal mask inherited from the test runner may block SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: dir)
    }
}

/// A real RabbitMQ on 127.0.0.1 (scripts/with-rabbitmq.sh), stopped by closing its standard input.
final class RabbitMQ {
    let port: UInt16
    private let process: Process
    private let input: Pipe
    private let logPath: String

    init() throws {
        var failure = ""
        for _ in 0..<2 {
            let port = try freeLoopbackPort(in: 29_001...32_000)
            let logPath = Scratch.directory + "rabbitmq-\(port).log"
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            let process = Process(), input = Pipe()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [Repo.root.appendingPathComponent("scripts/with-rabbitmq.sh").path, String(port), "bash", "-c", "read -r _ || true"]
            // The developer's own RabbitMQ settings are not this node's (RABBITMQ_DIST_PORT, say).
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RABBITMQ_") && !$0.key.hasPrefix("ERL_") }
            process.standardInput = input
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            process.standardError = process.standardOutput
            try process.run()
            // with-rabbitmq.sh gives up after 60 s, printing the end of the node's log, and exits.
            if waitUntilListening(port, by: process, seconds: 90) {
                self.port = port
                self.process = process
                self.input = input
                self.logPath = logPath
                return
            }
            Self.stop(process, input)
            failure = "RabbitMQ could not start on 127.0.0.1:\(port) (scripts/with-rabbitmq.sh "
                + (process.terminationReason == .exit ? "exited with status \(process.terminationStatus)" : "was killed")
                + "); the end of its log:\n" + tail(of: logPath)
            try? FileManager.default.removeItem(atPath: logPath)
            guard failure.contains("in use") || failure.contains("eaddrinuse") || failure.contains("already_used") else { break }
        }
        throw LiveTestError(failure)
    }

    func stop() {
        Self.stop(process, input)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    private static func stop(_ process: Process, _ input: Pipe) {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

struct LiveTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A port in `range` that nothing on 127.0.0.1 holds (no listener, no connection): binding it succeeds.
func freeLoopbackPort(in range: ClosedRange<UInt16>) throws -> UInt16 {
    for _ in 0..<200 {
        let port = UInt16.random(in: range)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { break }
        var addr = loopback(port)
        let bound = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        close(fd)
        if bound { return port }
    }
    throw LiveTestError("no free port on 127.0.0.1 in \(range)")
}

private func loopback(_ port: UInt16) -> sockaddr_in {
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = port.bigEndian
    addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return addr
}

/// Whether a TCP connect to 127.0.0.1:port succeeds now.
func portAccepts(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var addr = loopback(port)
    let connected = withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else { return false }
    // A connect from an ephemeral port equal to `port` connects the socket to itself (TCP
    // simultaneous open) while nothing listens: that is not the broker.
    var local = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &local) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
    }
    return !(named && UInt16(bigEndian: local.sin_port) == port)
}

/// Polls until 127.0.0.1:port accepts connections while `process` (the broker, or the script
/// running it) still runs; false at once if it exits, or after `seconds`.
func waitUntilListening(_ port: UInt16, by process: Process, seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline && process.isRunning {
        // Checked again after the connect: a broker that lost the port to another listener exits.
        if portAccepts(port) { return process.isRunning }
        usleep(100_000)
    }
    return false
}

/// The last `lines` lines of a file (a broker's log).
func tail(of path: String, lines: Int = 30) -> String {
    let text = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
    let all = text.split(separator: "\n", omittingEmptySubsequences: false)
    return all.suffix(lines).joined(separator: "\n")
}
