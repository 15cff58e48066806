import Foundation
import FuzzTargets
import Testing

/// Every input the fuzzers ever crashed on (Fuzz/regressions/TARGET/) and the seed corpora
/// (Fuzz/seeds/TARGET/) are replayed through the same target function. The assertion is the run
/// itself: a crash (trap, overflow, out-of-bounds) fails the whole test process.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ kind: String, _ target: String) -> [String] {
        let dir = root.appendingPathComponent(kind).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { "\(kind)/\(target)/\($0)" }
    }

    static let targets = ["mqtt", "amqp", "views", "pipeline"]

    static let all = ["regressions", "seeds"].flatMap { kind in targets.flatMap { inputs(kind, $0) } }

    @Test("there are seeds for every target")
    func seedsExist() {
        for target in Self.targets { #expect(!Self.inputs("seeds", target).isEmpty, "no seeds for \(target)") }
    }

    @Test("a saved input runs through its fuzz target without a crash", arguments: all)
    func replay(input: String) throws {
        let data = try #require(FileManager.default.contents(atPath: Self.root.appendingPathComponent(input).path))
        switch input.split(separator: "/").dropFirst().first {
        case "mqtt": fuzzMQTT(Array(data))
        case "amqp": fuzzAMQP(Array(data))
        case "views": fuzzViews(Array(data))
        default: fuzzPipeline(Array(data))
        }
    }
}
