import Foundation
import Testing

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
        while let p = e.nextObject() as? String where p.hasSuffix(".pcap") || p.hasSuffix(".pcapng") {
            out.append(dir.appendingPathComponent(p).path)
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
func runProgram(_ url: URL, _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 120) throws -> RunResult {
    let p = Process()
    p.executableURL = url
    p.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    p.environment = env
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let input = Pipe()
    p.standardInput = stdin == nil ? FileHandle.nullDevice : input
    try p.run()
    if let stdin {
        DispatchQueue.global().async {
            input.fileHandleForWriting.write(stdin)
            try? input.fileHandleForWriting.close()
        }
    }
    var outData = Data(), errData = Data()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    group.enter()
    DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    let deadline = Date().addingTimeInterval(timeout)
    while p.isRunning && Date() < deadline { usleep(20_000) }
    if p.isRunning { p.terminate() }
    p.waitUntilExit()
    group.wait()
    return RunResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                     stderr: String(decoding: errData, as: UTF8.self), crashed: p.terminationReason == .uncaughtSignal)
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
