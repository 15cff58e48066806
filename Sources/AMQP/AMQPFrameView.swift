import Dissection

/// How a connection's frames are shown: what the dissector asks of a view, made in Render
/// (`AMQPViews.AMQPStandardView`) and handed to the dissector (`AMQPConnectionDissector.view`),
/// so this module decodes and keeps state but writes no output of its own (issue #27 item 3).
package protocol AMQPFrameView: Sendable {
    /// A frame's PDU: its field tree and summary line, its problems, and what the connection
    /// added (`note`) as fields and, with the analysis and unless the detail is `.json`, as
    /// words. `requests`: the peer's last requests on the channel, which a close explanation
    /// and a SASL response read.
    func pdu(of frame: AMQPDecodedFrame, requests: [AMQPMethodID: AMQPMethod], note: AMQPFrameNote,
             options: AMQPOptions) -> DissectedPDU
    /// What a table counts of a frame with no problem, with no field tree; nil for a frame that
    /// goes as its tree.
    func counted(_ frame: AMQPDecodedFrame, note: AMQPFrameNote) -> CountedPDU?
    /// A content header's property summary (`content-type=text/plain delivery-mode=2`), which
    /// the header's summary line and its message's text show.
    func propertySummary(of header: AMQPContentHeader) -> String
    /// A protocol header's PDU (`header` nil: not one), with the problems found in it; `refused`:
    /// the server's, answering the client's with another version.
    func protocolHeader(_ bytes: ArraySlice<UInt8>, header: AMQPProtocolHeader?, problems: [Problem], refused: Bool) -> DissectedPDU
    /// The PDU of bytes that frame nothing (the problems say why).
    func unframed(_ count: Int, problems: [Problem]) -> DissectedPDU
    /// The PDU of a message the stream ended inside.
    func incompleteMessage(_ message: AMQPMessageAssembly, problem: Problem, options: AMQPOptions) -> DissectedPDU
}

extension AMQPDecodedFrame {
    /// Asks `view` for a content header's property summary, once (the header's summary line and
    /// its message's text show it), where a summary or a text line will (`AMQPOptions`); the
    /// connection and the decoder without one both go through here.
    package mutating func summarizeProperties(with view: some AMQPFrameView, options: AMQPOptions) {
        guard options.summaryDetail || options.textLines, let typed = header?.typed else { return }
        header!.propertySummary = view.propertySummary(of: typed.header)
    }
}
