import Foundation
import Dissection
import Testing

/// docs/json-schema.md as its section "How to read this document" says it is read: key paths in
/// the first cell of `key` tables, paths no capture produces in `unproduced key` tables, problem
/// codes in `code` tables, each in backticks.
struct JSONSchemaDoc {
    /// Documented key paths, with the line that lists each.
    var keys: [String: Int] = [:]
    /// Paths no capture produces, with the reason given.
    var unproduced: [String: String] = [:]
    var codes: Set<String> = []
    /// Analysis kinds, from `analysis kind` tables.
    var analysisKinds: Set<String> = []
    /// Rows the reader could not take: a table row that names nothing, a name listed twice.
    var malformed: [String] = []

    init(markdown: String) {
        var kind: String?
        var inTable = false
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            guard line.hasPrefix("|") else {
                inTable = false
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let first = cells.first else { continue }
            if !inTable {
                // The header row says what the table lists.
                inTable = true
                kind = ["key", "unproduced key", "code", "analysis kind"].contains(first) ? first : nil
                continue
            }
            guard let kind, !first.hasPrefix("---") else { continue }
            let names = Self.backticked(first)
            if names.isEmpty { malformed.append("line \(number): the first cell names nothing in backticks: \(line)") }
            for name in names {
                switch kind {
                case "key":
                    if let earlier = keys[name] { malformed.append("line \(number): \(name) is listed already (line \(earlier))") }
                    keys[name] = number
                case "unproduced key":
                    let reason = cells.count > 1 ? cells[1] : ""
                    if reason.isEmpty { malformed.append("line \(number): \(name) has no reason") }
                    unproduced[name] = reason
                case "analysis kind":
                    if !analysisKinds.insert(name).inserted { malformed.append("line \(number): kind \(name) is listed already") }
                default:
                    if !codes.insert(name).inserted { malformed.append("line \(number): code \(name) is listed already") }
                }
            }
        }
    }

    /// The spans between backticks.
    static func backticked(_ text: String) -> [String] {
        let parts = text.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }
    }

    /// Whether a path of the output is documented: listed, or below a listed `X.*`.
    func documents(_ path: String) -> Bool {
        if keys[path] != nil { return true }
        var prefix = Substring(path)
        while let dot = prefix.lastIndex(of: ".") {
            prefix = prefix[..<dot]
            if keys[prefix + ".*"] != nil { return true }
        }
        return false
    }

    /// Whether a documented path occurs among the paths of the output (for `X.*`: any path below X).
    static func occurs(_ key: String, in paths: [String: String]) -> Bool {
        guard key.hasSuffix(".*") else { return paths[key] != nil }
        let prefix = key.dropLast()
        return paths.keys.contains { $0.hasPrefix(prefix) }
    }
}

/// Key paths of a JSON value: keys joined by `.`, `[]` after a key whose value is an array.
func jsonKeyPaths(_ value: Any, prefix: String = "", into paths: inout Set<String>) {
    if let object = value as? [String: Any] {
        for (key, child) in object {
            let path = prefix.isEmpty ? key : prefix + "." + key
            paths.insert(path)
            jsonKeyPaths(child, prefix: path, into: &paths)
        }
    } else if let array = value as? [Any] {
        for element in array { jsonKeyPaths(element, prefix: prefix + "[]", into: &paths) }
    }
}

/// The JSON output of every capture the schema is held to, made once per test run.
enum SchemaOutputs {
    struct Output {
        var capture: String
        var lines: [String]
    }

    static let outputs: [Output] = {
        var runs: [(String, [String])] = []
        for sample in Repo.sampleCaptures() {
            runs.append((sample, GoldenTests.arguments(for: sample) + [Repo.samples.appendingPathComponent(sample).path]))
        }
        // A run in two passes adds keys to the flows of the PUBLISHes.
        let flows = Repo.samples.appendingPathComponent("mqtt-flows.pcap").path
        runs.append(("mqtt-flows.pcap --two-pass", ["--two-pass", flows]))
        for sample in ["amqp-consume-ack.pcap", "amqp-exchanges.pcap"] {
            runs.append(("\(sample) --two-pass", ["--two-pass", Repo.samples.appendingPathComponent(sample).path]))
        }
        // Present in CI; elsewhere the samples and the synthetic captures stand alone.
        for path in Repo.suricataCaptures() { runs.append(((path as NSString).lastPathComponent, [path])) }
        for (name, bytes) in SchemaCoverageCaptures.all {
            guard let path = try? SyntheticCapture.write(bytes, name: name, suffix: "pcap") else { continue }
            runs.append((name, [path]))
            // Its publishes' confirms and deliveries' acknowledgements, named on them.
            if name == "schema-amqp-analysis" { runs.append((name + " --two-pass", ["--two-pass", path])) }
        }
        return runs.map { capture, arguments in
            let result = try? dissect(["--format", "json", "--color", "never"] + arguments)
            return Output(capture: capture, lines: (result?.stdout ?? "").split(separator: "\n").map(String.init))
        }
    }()

    /// Every key path, with where it was first seen (`capture:line`).
    static let paths: [String: String] = {
        var seen: [String: String] = [:]
        for output in outputs {
            for (i, line) in output.lines.enumerated() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { continue }
                var paths = Set<String>()
                jsonKeyPaths(object, into: &paths)
                for path in paths where seen[path] == nil { seen[path] = "\(output.capture):\(i + 1)" }
            }
        }
        return seen
    }()
}

/// The problem codes the sources can give: the members `ProblemCode` lists (read from
/// Sources/Dissection/ProblemCode.swift's text, so a member left out of `known` is caught too),
/// and the raw values of `PacketIssue.Kind`, which the pipeline turns into capture events. Every
/// `Problem(severity, code, …)` and the MQTT parser's `error(code, …)` and
/// `problem(severity, code, …)` must name a listed member (`.qos3`); any other code expression
/// is reported, so a new way of making one cannot slip past unread: teach this reader that way.
enum SourceProblemCodes {
    /// Code expressions that pass a code on, and where the code comes from.
    static let forwarded: [String: String] = [
        "MQTT/PacketParser.swift code": "the parser's error(…) and problem(…) helpers",
        "Pipeline/Pipeline.swift ProblemCode(rawValue: issue.kind.rawValue)": "PacketIssue.Kind in Packets/PacketDecoder.swift",
    ]

    struct Found {
        /// Code → where it is listed.
        var codes: [String: String] = [:]
        /// Member name → code.
        var members: [String: String] = [:]
        var unread: [String] = []
    }

    static func scan() -> Found {
        var found = Found()
        let sources = Repo.root.appendingPathComponent("Sources")
        let literal = #""([^"\\]+)""#
        if let list = try? String(contentsOf: sources.appendingPathComponent("Dissection/ProblemCode.swift"), encoding: .utf8) {
            let member = try! NSRegularExpression(pattern: #"static let (\w+) = ProblemCode\(rawValue: "# + literal + #"\)"#)
            for m in member.matches(in: list, range: NSRange(list.startIndex..., in: list)) {
                let name = String(list[Range(m.range(at: 1), in: list)!]), code = String(list[Range(m.range(at: 2), in: list)!])
                found.members[name] = code
                found.codes[code] = "Dissection/ProblemCode.swift"
            }
        }
        guard let files = FileManager.default.enumerator(atPath: sources.path) else { return found }
        let made = try! NSRegularExpression(pattern: #"\bProblem\(\s*[\w.]+\s*,\s*([^,]+?)\s*,"#)
        // A severity is not a code: `problem(.error, code, …)` (the helper passing its code on) is no call to read.
        let helper = try! NSRegularExpression(
            pattern: #"\b(?:error|problem)\(\s*(?:\.(?:error|warning|note)\s*,\s*)?(?!\.(?:error|warning|note)\s*,)(\.\w+|"[^"]*")"#)
        while let file = files.nextObject() as? String {
            guard file.hasSuffix(".swift"), file != "Dissection/ProblemCode.swift",
                  let text = try? String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8) else { continue }
            // Comments are not code: `///` lines may show a call as an example.
            let stripped = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : String($0) }.joined(separator: "\n")
            let range = NSRange(stripped.startIndex..., in: stripped)
            func string(_ r: NSRange) -> String { String(stripped[Range(r, in: stripped)!]) }
            func check(_ argument: String, _ call: String) {
                if argument.hasPrefix("."), found.members[String(argument.dropFirst())] != nil { return }
                if forwarded["\(file) \(argument)"] != nil { return }
                found.unread.append("\(file): \(call)(…, \(argument), …)")
            }
            for m in made.matches(in: stripped, range: range) { check(string(m.range(at: 1)), "Problem") }
            for m in helper.matches(in: stripped, range: range) {
                let argument = string(m.range(at: 1))
                // A message rather than a code (spaces, capitals) is some other error(…).
                if argument.hasPrefix("\""), !argument.dropFirst().dropLast().allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) { continue }
                check(argument, "error/problem")
            }
            if file == "Packets/PacketDecoder.swift", let start = stripped.range(of: "enum Kind: String"),
               let end = stripped[start.upperBound...].range(of: "}") {
                let body = String(stripped[start.upperBound..<end.lowerBound])
                let raw = try! NSRegularExpression(pattern: #"case\s+\w+\s*=\s*"# + literal)
                for m in raw.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                    let name = String(body[Range(m.range(at: 1), in: body)!])
                    found.codes[name] = found.codes[name] ?? file
                }
            }
        }
        return found
    }
}

@Suite("docs/json-schema.md against the JSON output and the sources")
struct JSONSchemaTests {
    static let docURL = Repo.root.appendingPathComponent("docs/json-schema.md")
    static let doc = JSONSchemaDoc(markdown: (try? String(contentsOf: docURL, encoding: .utf8)) ?? "")

    @Test("the document is read as it says: every table row names something, nothing twice")
    func docReads() {
        #expect(Self.doc.malformed.isEmpty, "\(Self.doc.malformed.joined(separator: "\n"))")
        #expect(Self.doc.keys.count > 100)
        #expect(Self.doc.codes.count > 50)
    }

    @Test("every capture gave JSON lines, and every line is a JSON object")
    func outputsParse() {
        #expect(SchemaOutputs.outputs.count >= Repo.sampleCaptures().count + SchemaCoverageCaptures.all.count)
        for output in SchemaOutputs.outputs {
            #expect(!output.lines.isEmpty, "\(output.capture): no output")
            for (i, line) in output.lines.enumerated() {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(output.capture):\(i + 1): \(line)")
            }
        }
    }

    @Test("every key path of the output is documented")
    func outputDocumented() {
        let undocumented = SchemaOutputs.paths.filter { !Self.doc.documents($0.key) }.map { "\($0.key) (first at \($0.value))" }.sorted()
        #expect(undocumented.isEmpty, "not in docs/json-schema.md:\n\(undocumented.joined(separator: "\n"))")
    }

    @Test("every documented key path occurs in some output, but those listed as produced by none")
    func documentedOccurs() {
        let paths = SchemaOutputs.paths
        let absent = Self.doc.keys.keys.filter { Self.doc.unproduced[$0] == nil && !JSONSchemaDoc.occurs($0, in: paths) }.sorted()
        #expect(absent.isEmpty, "documented, but no capture produces them:\n\(absent.joined(separator: "\n"))")
        let produced = Self.doc.unproduced.keys.filter { JSONSchemaDoc.occurs($0, in: paths) }.sorted()
        #expect(produced.isEmpty, "listed as produced by no capture, but produced:\n\(produced.joined(separator: "\n"))")
        let unlisted = Self.doc.unproduced.keys.filter { Self.doc.keys[$0] == nil }.sorted()
        #expect(unlisted.isEmpty, "listed as produced by no capture, but not documented in a key table:\n\(unlisted.joined(separator: "\n"))")
    }

    @Test("every problem code the sources give is documented, and every documented code is one they give")
    func problemCodes() {
        let found = SourceProblemCodes.scan()
        #expect(found.unread.isEmpty, "Problem made with a code this test cannot read:\n\(found.unread.joined(separator: "\n"))")
        // The list in the code is the list the type gives: a member left out of `known` is caught.
        #expect(Set(found.members.values) == Set(ProblemCode.known.map(\.rawValue)))
        #expect(ProblemCode.known.count == found.members.count, "a member listed twice in `known`")
        #expect(found.codes.count > 50)
        let undocumented = found.codes.keys.filter { !Self.doc.codes.contains($0) }.map { "\($0) (\(found.codes[$0]!))" }.sorted()
        #expect(undocumented.isEmpty, "codes not in docs/json-schema.md:\n\(undocumented.joined(separator: "\n"))")
        let stale = Self.doc.codes.filter { found.codes[$0] == nil }.sorted()
        #expect(stale.isEmpty, "documented codes the sources do not give:\n\(stale.joined(separator: "\n"))")
    }

    @Test("every analysis kind the sources list is documented and the other way round; every kind in the output is listed")
    func analysisKinds() throws {
        // The static members of `AnalysisKind`, read from its source: one left out of `known` is caught.
        let source = try String(contentsOf: Repo.root.appendingPathComponent("Sources/Dissection/Analysis.swift"), encoding: .utf8)
        let members = try NSRegularExpression(pattern: #"static let \w+ = AnalysisKind\(rawValue: "([^"]+)"\)"#)
        let declared = Set(members.matches(in: source, range: NSRange(source.startIndex..., in: source)).map {
            String(source[Range($0.range(at: 1), in: source)!])
        })
        #expect(declared == Set(AnalysisKind.known.map(\.rawValue)))
        #expect(declared.count == AnalysisKind.known.count && declared.count >= 15)
        #expect(Self.doc.analysisKinds == declared, "docs/json-schema.md's analysis kinds against AnalysisKind.known")
        var seen = Set<String>()
        for output in SchemaOutputs.outputs {
            for line in output.lines {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let kind = object["analysis"] as? String else { continue }
                seen.insert(kind)
            }
        }
        #expect(seen.isSubset(of: declared), "kinds in the output not listed: \(seen.subtracting(declared).sorted())")
        #expect(seen.count >= 10, "\(seen.sorted())")
    }

    @Test("every problem code in the output is documented")
    func outputCodes() {
        var codes: [String: String] = [:]
        for output in SchemaOutputs.outputs {
            for (i, line) in output.lines.enumerated() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let problems = object["problems"] as? [[String: Any]] else { continue }
                for case let code as String in problems.map({ $0["code"] as Any }) where codes[code] == nil {
                    codes[code] = "\(output.capture):\(i + 1)"
                }
            }
        }
        let undocumented = codes.filter { !Self.doc.codes.contains($0.key) }.map { "\($0.key) (first at \($0.value))" }.sorted()
        #expect(undocumented.isEmpty, "\(undocumented.joined(separator: "\n"))")
    }

    @Test("a line with a time has a numeric ts right after it; an event line's problems are an array")
    func lineShapes() throws {
        let ts = try NSRegularExpression(pattern: #"^\{"frame":\d+,"time":"[0-9T:.-]+Z","ts":-?\d+(\.\d+)?,"stream":"#)
        var events = 0
        for output in SchemaOutputs.outputs {
            for (i, line) in output.lines.enumerated() {
                if line.contains("\"time\":") {
                    #expect(ts.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil, "\(output.capture):\(i + 1): \(line)")
                }
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let event = object["event"] as? String, event != "connection" else { continue }
                events += 1
                #expect(object["problem"] == nil)
                let problems = object["problems"] as? [[String: Any]]
                #expect(problems?.count == 1 && problems?.first?["code"] as? String == event, "\(output.capture):\(i + 1): \(line)")
            }
        }
        #expect(events >= 2, "the synthetic captures make a stream event and a capture event")
    }

    @Test("the checks fail on what they should: an undocumented key, a documented key no output has")
    func checksBite() {
        let doc = JSONSchemaDoc(markdown: """
            | key | type | meaning |
            |---|---|---|
            | `frame`, `amqp.properties.headers.*` | int | … |
            | `mqtt.gone` | int | … |

            | unproduced key | why |
            |---|---|
            | `mqtt.rare` | reason |

            | code | severity | from | meaning |
            |---|---|---|---|
            | `gap` | warning | stream | … |
            """)
        #expect(doc.malformed.isEmpty)
        #expect(doc.codes == ["gap"])
        var paths = Set<String>()
        let line = #"{"frame":1,"amqp":{"properties":{"headers":{"x":{"y":[{"z":1}]}}}},"mqtt":{"new_key":1}}"#
        jsonKeyPaths(try! JSONSerialization.jsonObject(with: Data(line.utf8)), into: &paths)
        #expect(paths.contains("amqp.properties.headers.x.y[].z"))
        // An added key is caught; what a wildcard covers is not.
        #expect(paths.filter { !doc.documents($0) }.sorted() == ["amqp", "amqp.properties", "amqp.properties.headers", "mqtt", "mqtt.new_key"])
        // A documented key no output has is caught; a wildcard occurs through what is below it.
        let seen = Dictionary(uniqueKeysWithValues: paths.map { ($0, "test") })
        #expect(!JSONSchemaDoc.occurs("mqtt.gone", in: seen))
        #expect(JSONSchemaDoc.occurs("amqp.properties.headers.*", in: seen))
        #expect(doc.unproduced == ["mqtt.rare": "reason"])
        // A row that names nothing is reported rather than skipped.
        #expect(!JSONSchemaDoc(markdown: "| key | type |\n|---|---|\n| frame | int |\n").malformed.isEmpty)
    }
}
