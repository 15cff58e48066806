import Foundation
import Testing

/// Whole-capture golden files: samples/NAME.pcap → samples/expected/NAME.{txt,json,table}.
/// `UPDATE_GOLDENS=1 swift test --filter Golden` rewrites them; read the diff before committing.
/// Extra options for a sample go in samples/NAME.args (one line, e.g. `--decode-as 1884=mqtt`).
@Suite("Golden outputs of the samples")
struct GoldenTests {
    static let formats: [(String, String)] = [("text", "txt"), ("json", "json"), ("table", "table")]

    static func arguments(for sample: String) -> [String] {
        let base = (sample as NSString).deletingPathExtension
        let argsFile = Repo.samples.appendingPathComponent(base + ".args")
        guard let text = try? String(contentsOf: argsFile, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }

    @Test("each sample's output matches its golden file in every format", arguments: Repo.sampleCaptures())
    func golden(sample: String) throws {
        let base = (sample as NSString).deletingPathExtension
        for (format, ext) in Self.formats {
            let args = ["--format", format, "--color", "never"] + Self.arguments(for: sample) + [Repo.samples.appendingPathComponent(sample).path]
            let result = try dissect(args)
            #expect(!result.crashed)
            #expect(result.status == 0, "\(sample) \(format): exit \(result.status): \(result.stderr)")
            let goldenURL = Repo.expected.appendingPathComponent("\(base).\(ext)")
            if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
                try FileManager.default.createDirectory(at: Repo.expected, withIntermediateDirectories: true)
                try result.stdout.write(to: goldenURL, atomically: true, encoding: .utf8)
                continue
            }
            let expected = try String(contentsOf: goldenURL, encoding: .utf8)
            let diff = goldenDiff(expected: expected, actual: result.stdout)
            #expect(diff == nil, "\(sample) --format \(format) differs from \(goldenURL.lastPathComponent): \(diff ?? "")")
        }
    }

    @Test("there are samples to check")
    func samplesExist() {
        #expect(Repo.sampleCaptures().count >= 5)
    }
}
