import Dissection

/// Settings shared by the renderers.
public struct RenderOptions: Sendable {
    /// Print credentials (MQTT passwords, AMQP SASL responses) instead of hiding them.
    public var showSecrets: Bool
    /// ANSI colour (the CLI turns it on for terminals only).
    public var color: Bool
    /// Text output: print the field tree under each summary line.
    public var showTree: Bool
    /// Text output: how many payload bytes to show as hex.
    public var hexPreviewBytes: Int
    /// Table output: rows kept per table (connections, topics, exchanges, queues, closes); what
    /// goes beyond is summed in one line, so memory does not grow with the capture.
    public var maxTableRows: Int

    public init(showSecrets: Bool = false, color: Bool = false, showTree: Bool = true, hexPreviewBytes: Int = 64,
                maxTableRows: Int = 1000) {
        self.maxTableRows = maxTableRows
        self.showSecrets = showSecrets
        self.color = color
        self.showTree = showTree
        self.hexPreviewBytes = hexPreviewBytes
    }
}

extension RenderOptions {
    /// How the text tree shows values with these options.
    public var textTreeStyle: TextTree.Style {
        TextTree.Style(hexPreviewBytes: hexPreviewBytes, showSecrets: showSecrets)
    }
}

/// Turns output events into text appended to a buffer; the caller decides when to write it.
/// As an `EventRenderer`, one per worker of a run; text and JSON depend on each event alone
/// (their `merge` has nothing to do), a table sums (its `merge` adds the sums).
public protocol Renderer: EventRenderer {
    mutating func render(_ event: OutputEvent, into out: inout String)
    /// The same text as UTF-8 bytes, for a program that writes bytes: renderers that build their
    /// lines as bytes skip making a String of them.
    mutating func render(_ event: OutputEvent, into bytes: inout [UInt8])
    /// The same bytes, written into a sink the caller keeps (an output buffer): renderers that
    /// build their lines in a sink write them there directly, not through a copy.
    mutating func render(_ event: OutputEvent, into sink: inout ByteSink)
    /// After the last event (summaries go here).
    mutating func finish(into out: inout String)
}

/// A renderer that writes each event into a byte sink (text, JSON): its String and byte-array
/// forms are what it writes there.
public protocol SinkRenderer: Renderer {
    /// The staging buffer the byte-array form writes through, kept from event to event.
    var scratch: ByteSink { get }
}

extension SinkRenderer {
    public mutating func render(_ event: OutputEvent, into out: inout String) {
        out.append(ByteSink.text { render(event, into: &$0) })
    }

    /// Writes straight into the caller's bytes through `scratch`: no String is made.
    public mutating func render(_ event: OutputEvent, into bytes: inout [UInt8]) {
        ByteSink.borrowing(&bytes, reusing: scratch) { render(event, into: &$0) }
    }
}
