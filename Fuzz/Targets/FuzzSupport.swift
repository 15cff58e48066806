import Foundation

/// The fuzz executables' replay mode: without libFuzzer (a plain build), each runs saved inputs
/// (crash reproducers, corpora), so a finding is rerun with a debugger at hand.
public enum FuzzSupport {
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
