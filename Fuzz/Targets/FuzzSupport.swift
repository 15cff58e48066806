import Dissection
import Foundation
import Render

/// What the fuzz targets share: turning the fuzzer's bytes into stream chunks, rendering every
/// output format, and a replay mode that runs saved inputs (crash reproducers, corpora) without
/// libFuzzer, so a finding is rerun with a plain build.
public enum FuzzSupport {
    /// Feeds `data` to a dissector as two directions' chunks. The first byte seeds the chunking,
    /// so the fuzzer explores splits and interleavings as well as contents.
    public static func feed<D: StreamDissector>(_ data: [UInt8], to dissector: inout D) -> [DissectedPDU] {
        var out: [DissectedPDU] = []
        guard let seed = data.first else { return out }
        var state = UInt32(seed) &* 2_654_435_761 | 1
        var i = 1
        while i < data.count {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            let length = min(data.count - i, Int(state % 97) + 1)
            let direction: Direction = state & 0x100 == 0 ? .toServer : .toClient
            if state % 23 == 0 {
                dissector.gap(Int(state % 17) + 1, in: direction, into: &out)
            }
            dissector.receive(data[i..<(i + length)], from: direction, into: &out)
            i += length
        }
        dissector.finish(.toServer, into: &out)
        dissector.finish(.toClient, into: &out)
        return out
    }

    /// Renders PDUs in every format (secrets shown or not, as the input's first byte says),
    /// so the renderers are fuzzed too.
    public static func renderAll(_ pdus: [DissectedPDU], showSecrets: Bool) {
        let context = StreamContext(frame: 1, time: Timestamp(seconds: 0, nanoseconds: 0), stream: 0, source: "a", destination: "b")
        do {
            let options = RenderOptions(showSecrets: showSecrets)
            var renderers: [any Renderer] = [TextRenderer(options: options), JSONRenderer(options: options), TableRenderer(options: options)]
            var text = ""
            for index in renderers.indices {
                for pdu in pdus { renderers[index].render(.pdu(context, .toServer, pdu), into: &text) }
                renderers[index].finish(into: &text)
            }
        }
    }

    /// Runs `body` on each file named on the command line (directories: each file inside).
    public static func replay(_ body: ([UInt8]) -> Void) {
        var paths: [String] = []
        for arg in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: arg, isDirectory: &isDirectory), isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: arg)) ?? []
                paths += names.sorted().map { arg + "/" + $0 }
            } else {
                paths.append(arg)
            }
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            body(Array(data))
        }
        print("replayed \(paths.count) inputs")
    }
}
