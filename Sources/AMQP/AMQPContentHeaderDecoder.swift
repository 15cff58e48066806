import Dissection

/// Decodes a content header frame's payload (AMQP 0-9-1 §4.2.6.1): class id, weight, body
/// size, property flags (continued while bit 0 of a flags word is set) and the properties
/// those flags say are present, in the class's property order, into an `AMQPContentHeader`.
/// The field tree is a view of it (`AMQPContentHeader+FieldTree.swift`); the problems are found here.
package struct AMQPContentHeaderDecoder {
    package struct Result {
        package var classID: UInt16?
        package var bodySize: UInt64?
        package var problems: [Problem] = []
        /// `content-type=text/plain delivery-mode=2`: set once by the connection from its view
        /// (`AMQPFrameView.propertySummary`) where a summary line or a text line shows it
        /// (`AMQPOptions.summaryDetail`, `.textLines`), else empty (a table shows none).
        package var propertySummary = ""
        /// The typed header.
        package var header: AMQPContentHeader? {
            get { typed?.header }
            set { typed = newValue.map(Typed.init) }
        }
        /// `header`, boxed: a header holds every basic property inline (about 600 bytes), and a
        /// result is copied through several layers per frame (callgrind,
        /// amqp-properties.pcap, json: about 100,000 more instructions in memcpy unboxed).
        package var typed: Typed?

        package final class Typed: Sendable {
            package let header: AMQPContentHeader
            package init(_ header: AMQPContentHeader) { self.header = header }
        }
    }

    package let options: AMQPOptions

    package func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool) -> Result {
        var names: RecentStrings?
        return decode(payload, isWhole: isWhole, names: &names)
    }

    /// `decode`, the entry names of its `headers` found among `names` (the connection's) first,
    /// and kept there. Its other strings are made each time: ids differ from message to message.
    package func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool, names: inout RecentStrings?) -> Result {
        var result = Result()
        var header = AMQPContentHeader()
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let weight = r.readUInt16(), let bodySize = r.readUInt64() else {
            result.problems.append(short(isWhole, "content header too short for class id, weight and body size",
                                         range: 7..<(7 + payload.count)))
            result.header = header
            return result
        }
        result.classID = classID
        result.bodySize = bodySize
        header.classID = Ranged(classID, 7..<9)
        header.weight = Ranged(weight, 9..<11)
        header.bodySize = Ranged(bodySize, 11..<19)
        if weight != 0 {
            result.problems.append(Problem(.warning, .weightNotZero, "the weight field is unused and must be zero",
                                           reference: "AMQP 0-9-1 §4.2.6.1", range: 9..<11))
        }

        // Property flags: 15 presence bits per word, most significant first; bit 0 continues.
        // Almost always there is one word.
        var packed: UInt64 = 0
        var wordCount = 0
        let flagsStart = r.offset
        while true {
            guard let word = r.readUInt16() else {
                result.problems.append(short(isWhole, "content header ends inside its property flags",
                                             range: (7 + flagsStart)..<(7 + payload.count)))
                result.header = header
                return result
            }
            packed |= UInt64(word) << UInt64(48 - 16 * wordCount)
            wordCount += 1
            if word & 1 == 0 { break }
            // No class defines more than 15 properties; a run of continuation words is noise.
            if wordCount >= 4 {
                result.problems.append(Problem(.error, .propertyFlagsRun,
                                               "property flags continue for more than 4 words",
                                               reference: "AMQP 0-9-1 §4.2.6.1", range: (7 + flagsStart)..<(7 + r.offset)))
                result.header = header
                return result
            }
        }
        let flags = AMQPPropertyFlags(packed: packed, wordCount: wordCount)
        let flagsRange = (7 + flagsStart)..<(7 + r.offset)
        header.propertyFlags = Ranged(flags, flagsRange)
        let properties = AMQPSpec.properties(classID: classID) ?? []
        let undefined = (properties.count..<max(properties.count, flags.count)).first { flags[$0] }
        if let undefined {
            let name = AMQPSpec.class(id: classID)?.name ?? "class \(classID)"
            result.problems.append(Problem(.error, .undefinedProperty,
                                           "property flag \(undefined + 1) is set, but \(name) defines only \(properties.count) properties; the properties cannot be decoded past it",
                                           reference: "AMQP 0-9-1 §4.2.6.1", range: flagsRange))
        }

        let propertiesStart = 7 + r.offset
        let propertyBytes = r.readRest()
        // Read inside the properties' buffer: the reader reads short strings where they lie.
        propertyBytes.withUnsafeBufferPointer { buffer in
            var reader = AMQPArgumentReader(propertyBytes, base: propertiesStart, options: options, address: buffer.baseAddress)
            swap(&reader.recentNames, &names)
            defer { swap(&reader.recentNames, &names) }
            // Only basic defines properties (the generator checks): another class reads none.
            if classID == 60 {
                AMQPBasicProperties.decode(&reader, flags: flags, into: &header.properties)
            }
            header.propertiesRange = propertiesStart..<reader.offset
            // The property the bytes ran out before: the flagged one after those read.
            var complete = true
            var flagged = 0
            for (i, prop) in properties.enumerated() where flags.isSet(i) {
                if flagged == reader.count {
                    reader.problems.append(short(isWhole, "content header ends before its \(prop.name) property",
                                                 range: reader.offset..<(7 + payload.count)))
                    complete = false
                    break
                }
                flagged += 1
            }
            if complete, isWhole, undefined == nil, reader.reader.remaining > 0 {
                let left = reader.reader.remaining
                let at = reader.offset
                reader.problems.append(Problem(.error, .trailingBytes, "\(left) bytes left over after the last property",
                                               reference: "AMQP 0-9-1 §4.2.6.1", range: at..<(at + left)))
            }
            result.problems += reader.problems
        }
        result.typed = Result.Typed(header)
        return result
    }

    private func short(_ isWhole: Bool, _ what: String, range: Range<Int>) -> Problem {
        if isWhole {
            return Problem(.error, .headerTruncated, what, reference: "AMQP 0-9-1 §4.2.6.1", range: range)
        }
        return Problem(.warning, .notCaptured, "\(what): the rest of the frame was not captured or not held", range: range)
    }
}
