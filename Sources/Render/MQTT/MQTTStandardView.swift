import Dissection
import MQTT

/// The standard view of MQTT packets: the field tree and summary line that text and JSON print,
/// the values a table counts, and the analyses' notes as fields and words. The dissector asks
/// it through `MQTTPacketView`; `MQTTConnectionDissector(info:options:)` (here) hands it over.
public struct MQTTStandardView: MQTTPacketView {
    public init() {}

    public func pdu(of packet: MQTTPacket, notes: MQTTPacketNotes, options: MQTTOptions, lineSink: ByteSink?) -> DissectedPDU {
        // Room for all three notes: counted per PDU, the optionals were copied to be tested, and
        // a 5.0 acknowledgement's five root fields then outgrew the room (callgrind, bench JSON:
        // +0.5% against this). The array lives until the PDU is printed.
        var pdu = packet.dissected(options: options, lineSink: lineSink, extraCount: 3) { fields in
            if let note = notes.flow { fields.append(note.field) }
            if let ping = notes.watch?.field { fields.append(ping) }
            if let delivery = notes.delivery { fields.append(delivery.field) }
        }
        // Words for the text line; JSON does not print them.
        if options.detail != .json {
            if let note = notes.flow {
                // Written in the connection's line buffer: one string made, none per piece.
                var sink = lineSink ?? ByteSink(capacity: 64)
                sink.removeAll()
                note.write(into: &sink)
                if sink.bytes.count > 0 { pdu.annotations.append(sink.take()) }
            }
            if let watch = notes.watch { pdu.annotations.append(watch.text) }
            if let delivery = notes.delivery { pdu.annotations.append(delivery.text) }
        }
        return pdu
    }

    public func counted(_ packet: MQTTPacket) -> CountedPDU? { packet.counted() }

    public func box(_ counted: borrowing CountedPDU, type: MQTTPacketType) -> DissectedPDU { MQTTPacket.box(counted, type: type) }

    public func countedBox(_ packet: MQTTPacket) -> DissectedPDU? { packet.countedConnect() }

    public func skipped(_ count: Int, problems: [Problem]) -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: "(\(count) bytes not decoded)",
                     fields: [Field("skipped_bytes", "Skipped Bytes", .int(count))], problems: problems, wireLength: count)
    }
}

extension MQTTConnectionDissector {
    /// A dissector whose packets the standard view shows.
    public init(info: ConnectionInfo, options: MQTTOptions = MQTTOptions()) {
        self.init(info: info, options: options, view: MQTTStandardView())
    }
}

/// The decoder's forms that return a PDU: the typed packet as the standard view shows it.
extension MQTTDecoder {
    /// Decodes one PDU.
    ///
    /// - Parameters:
    ///   - bytes: the PDU from its first byte: all of it, or a prefix of it.
    ///   - wireLength: the PDU's full length when `bytes` is a prefix; nil to take the length
    ///     from the fixed header (bytes beyond it are then reported).
    ///   - version: the connection's version (a CONNECT is decoded with the version it announces).
    ///   - state: this direction's topic aliases; PUBLISH packets read and update it.
    public static func decode(_ bytes: ArraySlice<UInt8>, wireLength: Int? = nil, version: MQTTVersion,
                              state: inout MQTTDirectionState, options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        MQTTStandardView().pdu(of: decodePacket(bytes, wireLength: wireLength, version: version, state: &state), notes: MQTTPacketNotes(),
                         options: options, lineSink: nil)
    }

    /// Decodes one PDU held whole, with no session (topic aliases are not resolved across calls).
    public static func decode(_ bytes: [UInt8], version: MQTTVersion, options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        var state = MQTTDirectionState()
        return decode(bytes[...], version: version, state: &state, options: options)
    }

    /// Decodes a framer's output, adding what the framer knows of lost bytes.
    public static func decode(_ frame: MQTTFrame, version: MQTTVersion, state: inout MQTTDirectionState,
                              options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        MQTTStandardView().pdu(of: decodePacket(frame, version: version, state: &state), notes: MQTTPacketNotes(),
                         options: options, lineSink: nil)
    }

    /// Every PDU in `bytes`, one direction of a connection from its start. A CONNECT sets the
    /// version; before one, `version` (or a guess) applies. An incomplete last PDU is reported.
    public static func decodeAll(_ bytes: [UInt8], version: MQTTVersion? = nil, direction: Direction = .toServer,
                                 options: MQTTOptions = MQTTOptions()) -> [DissectedPDU] {
        var options = options
        if let version { options.assumedVersion = version }
        var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883), options: options)
        var out: [DissectedPDU] = []
        dissector.receive(bytes[...], from: direction, into: &out)
        dissector.finish(direction, into: &out)
        return out
    }
}
