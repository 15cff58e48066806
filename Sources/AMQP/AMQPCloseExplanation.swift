import Dissection

/// Plain-language explanations of the close reasons people meet most, matched on the reply
/// code and RabbitMQ's reply text. A small table of patterns; anything else gets none.
package enum AMQPCloseExplanation {
    /// What is known about the close.
    package struct Context {
        package var replyCode: Int
        package var replyText: String
        /// The method the close blames (its class-id and method-id), if any.
        package var failedMethod: AMQPMethodID?
        /// The blamed request, typed, when this connection showed it.
        package var request: AMQPMethod?
    }

    package struct Pattern: Sendable {
        package var code: Int
        /// Text the reply text must contain (empty: any).
        package var contains: String
        package var explain: @Sendable (Context) -> String
    }

    package static func explain(_ context: Context) -> String? {
        for pattern in patterns where pattern.code == context.replyCode {
            if pattern.contains.isEmpty || context.replyText.includes(pattern.contains) {
                return pattern.explain(context)
            }
        }
        return nil
    }

    package static let patterns: [Pattern] = [
        Pattern(code: 406, contains: "inequivalent arg") { c in
            let arg = quoted(after: "inequivalent arg", in: c.replyText) ?? "?"
            let kind = c.replyText.includes("for exchange") ? "exchange" : "queue"
            let name = quoted(after: "for \(kind)", in: c.replyText) ?? "?"
            let vhost = quoted(after: "in vhost", in: c.replyText).map { " in vhost '\($0)'" } ?? ""
            let (received, current) = equivalenceSides(c.replyText)
            let existing = current.map { "with \(arg)=\($0)" } ?? "without \(arg)"
            let asked = received.map { "asked for \(arg)=\($0)" } ?? "did not set \(arg)"
            let same = kind == "queue"
                ? "durable, exclusive and auto-delete flags and the same arguments"
                : "type, durable, auto-delete and internal flags and the same arguments"
            return "The \(kind) '\(name)' already exists\(vhost) \(existing), and this declare \(asked). "
                + "A redeclare must use the same \(same) as the existing \(kind): change the declare to match, "
                + "or delete the \(kind) first (deleting a queue loses its messages)."
        },
        Pattern(code: 406, contains: "unknown delivery tag") { _ in
            "The acknowledged delivery tag is not outstanding on this channel: it was already acked or rejected, "
                + "it belongs to another channel (tags are per channel), or the consumer uses automatic acknowledgement (no-ack). "
                + "RabbitMQ closes the channel for it."
        },
        Pattern(code: 406, contains: "delivery acknowledgement on channel") { _ in
            "A delivery was not acknowledged within the broker's consumer timeout (RabbitMQ's consumer_timeout, 30 minutes by default), "
                + "so the broker closed the channel. Acknowledge sooner, or raise the timeout."
        },
        Pattern(code: 406, contains: "not empty") { _ in
            "queue.delete with if-empty was refused because the queue still holds messages."
        },
        Pattern(code: 406, contains: "in use") { _ in
            "The delete with if-unused was refused because the queue or exchange still has consumers or bindings."
        },
        Pattern(code: 404, contains: "no queue") { c in
            let name = quoted(after: "no queue", in: c.replyText) ?? "?"
            let vhost = quoted(after: "in vhost", in: c.replyText).map { " in vhost '\($0)'" } ?? ""
            var why = "The queue '\(name)' does not exist\(vhost)."
            if let failed = c.failedMethod {
                if failed == .queueDeclare, c.request?.passive ?? true {
                    why += " A passive queue.declare only checks for an existing queue; it never creates one."
                } else {
                    why += " \(failed) needs an existing queue."
                }
            }
            return why + " Was it exclusive or auto-delete and removed with the connection or consumer that made it, "
                + "or a server-named queue (amq.gen-...) declared on another connection? Declare it (not passively) before using it."
        },
        Pattern(code: 404, contains: "no exchange") { c in
            let name = quoted(after: "no exchange", in: c.replyText) ?? "?"
            let vhost = quoted(after: "in vhost", in: c.replyText).map { " in vhost '\($0)'" } ?? ""
            return "The exchange '\(name)' does not exist\(vhost). Declare it before publishing to it or binding to it; "
                + "publishing to a missing exchange closes the channel."
        },
        Pattern(code: 403, contains: "Login was refused") { _ in
            "The broker refused the login: a wrong user name or password, a mechanism not enabled for the user, "
                + "or RabbitMQ's 'guest' user connecting from a host other than localhost."
        },
        Pattern(code: 403, contains: "contains reserved prefix 'amq.*'") { c in
            let kind = c.replyText.includes("exchange name") ? "exchange" : "queue"
            let name = quoted(after: "\(kind) name", in: c.replyText) ?? "?"
            return "The \(kind) name '\(name)' starts with 'amq.', a prefix the broker reserves for its own \(kind)s, so a client may not declare it. "
                + (kind == "queue"
                    ? "Choose another name, or declare the queue with an empty name to have the broker name it."
                    : "Choose another name.")
        },
        Pattern(code: 403, contains: "operation not permitted on the default exchange") { _ in
            "The default exchange (named '') cannot be declared, deleted or bound by a client: every queue is already bound to it "
                + "by its own name. Publish to it with the queue's name as the routing key instead of binding."
        },
        Pattern(code: 403, contains: "") { _ in
            "Access refused: the user lacks the configure, write or read permission this operation needs on that resource "
                + "in this vhost, or the login itself was refused. Check the user's permissions (rabbitmqctl list_permissions) and credentials."
        },
        Pattern(code: 405, contains: "") { _ in
            "The queue is locked by another connection: it was declared exclusive there, so only that connection may use it, "
                + "or this declare's exclusive flag differs from the original declaration."
        },
        Pattern(code: 530, contains: "vhost") { _ in
            "The virtual host does not exist, or the user has no permissions on it (rabbitmqctl set_permissions -p <vhost>)."
        },
        Pattern(code: 320, contains: "") { _ in
            "The broker closed the connection on its own: it is shutting down or restarting, or an operator closed the connection "
                + "(management UI or rabbitmqctl close_connection). Reconnect."
        },
        Pattern(code: 541, contains: "") { _ in
            "The broker hit an internal error handling the request; the broker's log has the cause."
        },
        Pattern(code: 504, contains: "expected 'channel.open'") { _ in
            "A method was sent on a channel that is not open (never opened, or already closed by an earlier error). Open the channel first."
        },
        Pattern(code: 505, contains: "") { _ in
            "The broker received a frame it did not expect at that point, such as a content body without its header, "
                + "or a method in the middle of a message's content frames."
        },
        Pattern(code: 501, contains: "") { _ in
            "The broker could not parse a frame: bad framing, a frame larger than the negotiated frame-max, or a wrong frame-end."
        },
        Pattern(code: 312, contains: "") { _ in
            "The message was published with mandatory set, and no queue is bound to its exchange with a matching routing key; "
                + "the broker returned it."
        },
    ]

    /// The two sides of RabbitMQ's `received X but current is Y` (rabbit_misc:equivalence_fail).
    /// Each side is `'v'` (flags), `the value 'v' of type 't'` (x-arguments), or `none` (not set,
    /// returned as nil). A reply text without that shape gives "?" for both.
    package static func equivalenceSides(_ text: String) -> (received: String?, current: String?) {
        guard let r = text.findRange("received "),
              let b = text[r.upperBound...].findRange(" but current is ") else { return ("?", "?") }
        return (equivalenceSide(text[r.upperBound..<b.lowerBound]), equivalenceSide(text[b.upperBound...]))
    }

    private static func equivalenceSide(_ raw: Substring) -> String? {
        let side = raw.drop { $0 == " " }
        if side == "none" { return nil }
        let valuePrefix = "the value '"
        if side.hasPrefix(valuePrefix) {
            let body = side.dropFirst(valuePrefix.count)
            if let typeMarker = body.findRange("' of type '") {
                let type = body[typeMarker.upperBound...].prefix { $0 != "'" }
                return "\(body[..<typeMarker.lowerBound]) (\(type))"
            }
        }
        if side.count >= 2, side.first == "'", side.last == "'" { return String(side.dropFirst().dropLast()) }
        return side.isEmpty ? "?" : String(side)
    }

    /// The text between the first pair of single quotes after `marker`, or the next word when
    /// the value is not quoted (`current is none`).
    package static func quoted(after marker: String, in text: String) -> String? {
        guard let markerRange = text.findRange(marker) else { return nil }
        let rest = text[markerRange.upperBound...]
        let trimmed = rest.drop { $0 == " " }
        if let open = trimmed.firstIndex(of: "'") {
            // Only a quote that comes before the next clause belongs to this marker.
            let before = trimmed[..<open]
            if before.count <= 32, !before.contains(":") {
                let afterOpen = trimmed[trimmed.index(after: open)...]
                guard let close = afterOpen.firstIndex(of: "'") else { return nil }
                return String(afterOpen[..<close])
            }
        }
        let word = trimmed.prefix { $0 != " " && $0 != "," && $0 != ":" }
        return word.isEmpty ? nil : String(word)
    }
}

extension StringProtocol {
    /// The first range of `needle`, an ASCII marker (all of this file's), without Foundation: its
    /// UTF-8 bytes searched for, a match kept where both its ends are Character boundaries. An
    /// ASCII Character has no other spelling, so that is what a search by Characters finds; a
    /// reply text is short, but a hostile one is up to 255 bytes and searched once per marker
    /// (the Character by Character search took a tenth of the AMQP fuzz target's time).
    fileprivate func findRange(_ needle: String) -> Range<Index>? {
        assert(needle.utf8.allSatisfy { $0 < 0x80 }, "a marker is ASCII")
        guard !needle.isEmpty else { return nil }
        let text = String(self)
        let n = Array(needle.utf8)
        let found: Range<Int>? = text.utf8.withContiguousStorageIfAvailable { bytes -> Range<Int>? in
            guard bytes.count >= n.count else { return nil }
            var i = 0
            while i <= bytes.count - n.count {
                if bytes[i] == n[0] {
                    var j = 1
                    while j < n.count, bytes[i + j] == n[j] { j += 1 }
                    if j == n.count, Self.isCharacterBoundary(i, in: text), Self.isCharacterBoundary(i + n.count, in: text) {
                        return i..<(i + n.count)
                    }
                }
                i += 1
            }
            return nil
        } ?? nil
        guard let found else { return nil }
        // The same offsets in `self` (a Substring's start is a Character boundary of the text).
        let start = utf8.index(utf8.startIndex, offsetBy: found.lowerBound)
        return start..<utf8.index(start, offsetBy: n.count)
    }

    private static func isCharacterBoundary(_ offset: Int, in text: String) -> Bool {
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: offset)
        return index.samePosition(in: text) != nil
    }
}

extension String {
    /// Whether `needle` occurs in the string, without Foundation.
    fileprivate func includes(_ needle: String) -> Bool {
        needle.isEmpty || findRange(needle) != nil
    }
}
