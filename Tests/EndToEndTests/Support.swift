import Foundation
import Testing

/// Where the end-to-end tests write their captures and outputs: one directory per test process,
/// removed when the process exits, so runs leave nothing behind in the system's temporary directory.
enum Scratch {
    static let directory: String = {
        let dir = NSTemporaryDirectory() + "proto-dissect-tests-\(getpid())/"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Scratch.directory) }
        return dir
    }()
}

/// Paths and a way to run the built command line, for the end-to-end tests.
enum Repo {
    /// The repository root (this file is Tests/EndToEndTests/Support.swift).
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let samples = root.appendingPathComponent("samples")
    static let expected = samples.appendingPathComponent("expected")
    /// ../shared beside the repository (present in CI).
    static let shared = root.deletingLastPathComponent().appendingPathComponent("shared")

    /// The proto-dissect binary built beside the test bundle.
    static var binary: URL {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for dir in [bundleDir, bundleDir.deletingLastPathComponent(), bundleDir.deletingLastPathComponent().deletingLastPathComponent()] {
            let candidate = dir.appendingPathComponent("proto-dissect")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/proto-dissect")
    }

    /// The captures in samples/, sorted.
    static func sampleCaptures() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
        return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted()
    }

    /// Every capture under shared/captures/suricata-verify, as paths.
    static func suricataCaptures() -> [String] {
        let dir = shared.appendingPathComponent("captures/suricata-verify")
        guard let e = FileManager.default.enumerator(atPath: dir.path) else { return [] }
        var out: [String] = []
        while let p = e.nextObject() as? String {
            if p.hasSuffix(".pcap") || p.hasSuffix(".pcapng") { out.append(dir.appendingPathComponent(p).path) }
        }
        return out.sorted()
    }
}

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    /// Ended by a signal (a crash).
    var crashed: Bool
}

/// Runs a program with arguments and optional standard input; bounded by `timeout` seconds.
/// Output goes through temporary files, so no reader threads are needed.
func runProgram(_ url: URL, _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 120) throws -> RunResult {
    let p = Process()
    p.executableURL = url
    p.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    p.environment = env
    let stem = Scratch.directory + "run-\(UInt64.random(in: 0...UInt64.max))"
    let outPath = stem + ".out", errPath = stem + ".err", inPath = stem + ".in"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer { for path in [outPath, errPath, inPath] { try? FileManager.default.removeItem(atPath: path) } }
    let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    p.standardOutput = outHandle
    p.standardError = errHandle
    if let stdin {
        try stdin.write(to: URL(fileURLWithPath: inPath))
        p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
    } else {
        p.standardInput = FileHandle.nullDevice
    }
    try p.run()
    let deadline = Date().addingTimeInterval(timeout)
    while p.isRunning && Date() < deadline { usleep(10_000) }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    try? outHandle.close()
    try? errHandle.close()
    let out = (try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data()
    let err = (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data()
    return RunResult(status: p.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                     stderr: String(decoding: err, as: UTF8.self), crashed: p.terminationReason == .uncaughtSignal)
}

/// Runs proto-dissect.
func dissect(_ arguments: [String], stdin: Data? = nil) throws -> RunResult {
    try runProgram(Repo.binary, arguments, stdin: stdin)
}

/// The JSON objects of an NDJSON output.
func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { line in
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
}

/// Lines of a golden file and of the output, with the first difference shown.
func goldenDiff(expected: String, actual: String) -> String? {
    if expected == actual { return nil }
    let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
    for i in 0..<max(e.count, a.count) {
        let el = i < e.count ? String(e[i]) : "<end>"
        let al = i < a.count ? String(a[i]) : "<end>"
        if el != al { return "line \(i + 1):\n  expected: \(el)\n  actual:   \(al)" }
    }
    return "outputs differ"
}
