import FuzzTargets

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzMQTT(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
@main
enum FuzzMQTTReplay {
    static func main() {
        FuzzSupport.replay(fuzzMQTT)
    }
}
#endif
