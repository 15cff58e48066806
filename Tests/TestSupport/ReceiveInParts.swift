import Dissection

/// Gives `bytes` to `dissector` with a limit of `limit` PDUs a call, then asks for more until it
/// has none (as the pipeline does): the PDUs in order, and how many each call made.
public func receiveInParts<D: StreamDissector>(_ bytes: ArraySlice<UInt8>, to dissector: inout D, from direction: Direction,
                                               limit: Int) -> (pdus: [DissectedPDU], parts: [Int]) {
    var all: [DissectedPDU] = []
    var parts: [Int] = []
    var part: [DissectedPDU] = []
    var more = dissector.receive(bytes, from: direction, into: &part, limit: limit)
    while true {
        parts.append(part.count)
        all += part
        guard more else { return (all, parts) }
        part.removeAll()
        more = dissector.receiveMore(from: direction, into: &part, limit: limit)
    }
}

/// What each PDU reads as (summary, problems, length, fields), for comparing two runs.
public func readings(_ pdus: [DissectedPDU]) -> [String] {
    pdus.map { "\($0.summary) \($0.problems.map(\.description)) \($0.wireLength) \($0.fields.map { "\($0)" })" }
}
