// Foundation runs the generator here; the decoder itself stays free of it.
import Foundation
import Testing

/// The repository root: this file is Tests/AMQPTests/AMQPGeneratedTableSyncTests.swift.
private let repoRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The spec the generator reads by default: ../shared beside the repository (present in CI).
private let specPresent = FileManager.default.fileExists(
    atPath: repoRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/amqp-0-9-1.json").path)

@Suite("AMQP generated method table")
struct AMQPGeneratedTableSyncTests {
    @Test("the committed method table is what scripts/gen-amqp-methods.py writes, byte for byte",
          .enabled(if: specPresent, "needs ../shared/reference/amqp-0-9-1.json"))
    func generatedTableInSync() throws {
        let committed = repoRoot.appendingPathComponent("Sources/AMQP/Generated/AMQPMethods+Generated.swift")
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("AMQPMethods+Generated-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).swift")
        defer { try? FileManager.default.removeItem(at: output) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repoRoot.appendingPathComponent("scripts/gen-amqp-methods.py").path, output.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "the generator failed")

        let generated = try Data(contentsOf: output)
        let expected = try Data(contentsOf: committed)
        #expect(generated == expected,
                "Sources/AMQP/Generated/AMQPMethods+Generated.swift is out of date: run python3 scripts/gen-amqp-methods.py")
    }
}
