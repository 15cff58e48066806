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
    @Test("the committed method table and typed methods are what scripts/gen-amqp-methods.py writes, byte for byte",
          .enabled(if: specPresent, "needs ../shared/reference/amqp-0-9-1.json"))
    func generatedTableInSync() throws {
        let unique = "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let temporary = FileManager.default.temporaryDirectory
        let table = temporary.appendingPathComponent("AMQPMethods+Generated-\(unique).swift")
        let typed = temporary.appendingPathComponent("AMQPMethod+Generated-\(unique).swift")
        defer {
            try? FileManager.default.removeItem(at: table)
            try? FileManager.default.removeItem(at: typed)
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repoRoot.appendingPathComponent("scripts/gen-amqp-methods.py").path, table.path,
                             "--typed-output", typed.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "the generator failed")

        for (output, committed) in [(table, "Sources/AMQP/Generated/AMQPMethods+Generated.swift"),
                                    (typed, "Sources/AMQP/Generated/AMQPMethod+Generated.swift")] {
            let generated = try Data(contentsOf: output)
            let expected = try Data(contentsOf: repoRoot.appendingPathComponent(committed))
            #expect(generated == expected, "\(committed) is out of date: run python3 scripts/gen-amqp-methods.py")
        }
    }
}
