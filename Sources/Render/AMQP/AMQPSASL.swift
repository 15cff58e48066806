import AMQP
import Dissection

/// The user name inside a SASL response, where the mechanism carries it in the clear.
/// The response itself stays a secret; only the name is shown.
enum AMQPSASL {
    /// PLAIN (RFC 4616): `authzid \0 authcid \0 password`: the user is the authcid.
    /// AMQPLAIN: a field table without its length, with `LOGIN` and `PASSWORD` entries.
    static func user(mechanism: String?, response: AMQPArgumentValue?) -> String? {
        guard let mechanism, case .longString(let bytes, _)? = response else { return nil }
        switch mechanism {
        case "PLAIN":
            let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return AMQPText.shortString(parts[1])
        case "AMQPLAIN":
            var tables = AMQPFieldTableDecoder(options: AMQPOptions())
            let entries = tables.decodeEntries(bytes, base: 0, depth: 1)
            guard let login = entries.first(where: { $0.name == "LOGIN" }) else { return nil }
            // The text the entry's field would show.
            return login.value.field(key: FieldKey(dynamic: login.name), name: login.name, range: login.range,
                                     depthLimit: AMQPOptions().effectiveTableDepth).value.stringValue
        default:
            return nil
        }
    }
}
