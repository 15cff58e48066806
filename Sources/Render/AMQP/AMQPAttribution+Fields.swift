import AMQP
import Dissection

/// The queue a delivery or settlement was attributed to, as root fields of its PDU.
extension AMQPQueueTracker.Attribution {
    static let ackedCountLabel = "Outstanding deliveries covered (multiple)"

    /// The derived root fields of the PDU: `queue`, and `acked_count` for `multiple`.
    var fields: [Field] {
        var fields: [Field] = []
        if let queue {
            var label = ByteSink(capacity: 48)
            writeQueueLabel(into: &label)
            fields.append(Field("queue", label.take(), .string(queue)))
        }
        if let ackedCount { fields.append(Field("acked_count", Self.ackedCountLabel, .int(ackedCount))) }
        return fields
    }

    /// `Queue (from basic.consume)` and the like, written as bytes (interpolating a delivery
    /// tag into a String cost several times as much).
    private func writeQueueLabel(into out: inout ByteSink) {
        switch source {
        case .consume: out.literal("Queue (from basic.consume)")
        case .get: out.literal("Queue (from basic.get)")
        case .covered: out.literal("Queue (from the deliveries it covers)")
        case .deliveryTag(let tag):
            out.literal("Queue (from delivery-tag ")
            out.append(tag)
            out.literal(")")
        }
    }
}
