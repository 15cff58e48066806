import Dissection

/// The AMQP 0-9-1 method table: classes, methods, their arguments and the spec's constants.
///
/// The tables themselves (`classes`, `constants`) are generated from the machine-readable
/// spec into `Generated/AMQPMethods+Generated.swift`; this file holds their types and lookups.
public enum AMQPSpec {
    /// The method with these ids, or nil when the spec has none.
    public static func method(classID: UInt16, methodID: UInt16) -> AMQPMethodSpec? {
        // Indexed, not hashed: this runs for every method frame.
        let c = Int(classID), m = Int(methodID)
        guard c < methodsByID.count, m < methodsByID[c].count else { return nil }
        return methodsByID[c][m]
    }

    /// The class with this id, or nil when the spec has none.
    public static func `class`(id: UInt16) -> AMQPClassSpec? {
        Int(id) < classesByID.count ? classesByID[Int(id)] : nil
    }

    /// The content properties of the class with this id, or nil when the spec has no such class.
    /// The list alone: a class copied out of its table retained its name and both lists.
    package static func properties(classID: UInt16) -> [AMQPArgumentSpec]? {
        Int(classID) < propertiesByID.count ? propertiesByID[Int(classID)] : nil
    }

    private static let propertiesByID = byClassID { $0.properties }

    /// Every method of every class, in spec order.
    public static var allMethods: [AMQPMethodSpec] { classes.flatMap(\.methods) }

    /// Methods by class id, then method id (the spec's ids are below 256).
    private static let methodsByID = byMethodID { $0 }

    private static let classesByID = byClassID { $0 }

    /// Something made for each method of the spec, indexed by class id, then method id: the
    /// lookup tables of frame decoding, indexed rather than hashed (they are read per frame).
    package static func byMethodID<T>(_ make: (AMQPMethodSpec) -> T) -> [[T?]] {
        var table = [[T?]](repeating: [], count: Int(classes.map(\.id).max() ?? 0) + 1)
        for cls in classes {
            for m in cls.methods {
                let c = Int(m.classID), i = Int(m.methodID)
                if table[c].count <= i { table[c] += [T?](repeating: nil, count: i + 1 - table[c].count) }
                table[c][i] = make(m)
            }
        }
        return table
    }

    /// Something made for each class of the spec, indexed by class id.
    package static func byClassID<T>(_ make: (AMQPClassSpec) -> T) -> [T?] {
        var table = [T?](repeating: nil, count: Int(classes.map(\.id).max() ?? 0) + 1)
        for cls in classes { table[Int(cls.id)] = make(cls) }
        return table
    }
}

/// How an argument or property is encoded on the wire (AMQP 0-9-1 §4.2.5).
public enum AMQPWireType: String, Sendable, CaseIterable {
    case octet, short, long, longlong, bit, shortstr, longstr, timestamp, table
}

/// One method argument or content property. A class: decoded values keep a reference to their
/// spec, and one reference costs less to copy than the spec's strings.
public final class AMQPArgumentSpec: Sendable, Equatable {
    /// The spec's name, e.g. `routing-key`.
    public let name: String
    public let type: AMQPWireType
    /// The spec's domain (`exchange-name`), when the argument is declared through one.
    public let domain: String?

    public init(name: String, type: AMQPWireType, domain: String?) {
        self.name = name
        self.type = type
        self.domain = domain
        // Computed once here, not per decoded frame: they are on the hot path.
        self.key = FieldKey(checking: AMQPSpec.snakeCase(name))
        self.label = AMQPSpec.titleCase(name)
    }

    /// The JSON key: the spec name in snake_case (`routing_key`).
    public let key: FieldKey
    /// The text-tree label: `Routing-Key`.
    public let label: String

    public static func == (a: AMQPArgumentSpec, b: AMQPArgumentSpec) -> Bool {
        a === b || (a.name == b.name && a.type == b.type && a.domain == b.domain)
    }
}

/// One method of a class (a class, like `AMQPArgumentSpec`: frames hold it per decoded method).
public final class AMQPMethodSpec: Sendable, Equatable {
    public let classID: UInt16
    public let methodID: UInt16
    public let className: String
    public let methodName: String
    /// Whether a content header and body frames follow the method (basic.publish, say).
    public let carriesContent: Bool
    public let isSynchronous: Bool
    public let arguments: [AMQPArgumentSpec]

    public init(classID: UInt16, methodID: UInt16, className: String, methodName: String,
                carriesContent: Bool, isSynchronous: Bool, arguments: [AMQPArgumentSpec]) {
        self.classID = classID
        self.methodID = methodID
        self.className = className
        self.methodName = methodName
        self.carriesContent = carriesContent
        self.isSynchronous = isSynchronous
        self.arguments = arguments
        self.fullName = className + "." + methodName
        self.messageArguments = AMQPMessageAssembly.routingArguments.compactMap { name in arguments.firstIndex { $0.name == name } }
        // Consecutive bit arguments share octets, lowest bit first (§4.2.5.2); any other type ends
        // the run. So each bit argument's position is known here, and with it the only two lines
        // it can show: `.......1 = Mandatory: true`.
        var run = 0
        self.bitLines = arguments.map { arg in
            guard arg.type == .bit else { run = 0; return nil }
            let position = run % 8
            run += 1
            func line(_ set: Bool) -> String {
                let mask = String(repeating: ".", count: 7 - position) + (set ? "1" : "0") + String(repeating: ".", count: position)
                return "\(mask) = \(arg.label): \(set)"
            }
            return (clear: line(false), set: line(true))
        }
    }

    /// The text-tree lines of each argument that is a bit, cleared and set, by argument index
    /// (nil for the others). Made once here: every bit of every frame shows one, and building
    /// each took a few string appends.
    package let bitLines: [(clear: String, set: String)?]

    /// Where the arguments a message view repeats (`AMQPMessageAssembly.routingArguments`) are in
    /// `arguments`, in the order the view shows them: found once here, not by name per message.
    package let messageArguments: [Int]

    /// `basic.publish`. Made once here: summaries, fields and message assemblies name the method
    /// of nearly every frame, and concatenating it each time made a string per use.
    public let fullName: String

    public static func == (a: AMQPMethodSpec, b: AMQPMethodSpec) -> Bool {
        a === b || (a.classID == b.classID && a.methodID == b.methodID && a.className == b.className
                    && a.methodName == b.methodName && a.carriesContent == b.carriesContent
                    && a.isSynchronous == b.isSynchronous && a.arguments == b.arguments)
    }
}

/// One class: its methods, and the properties of content it carries (only `basic` has any).
public struct AMQPClassSpec: Sendable, Equatable {
    public let id: UInt16
    public let name: String
    public let methods: [AMQPMethodSpec]
    public let properties: [AMQPArgumentSpec]

    public init(id: UInt16, name: String, methods: [AMQPMethodSpec], properties: [AMQPArgumentSpec]) {
        self.id = id
        self.name = name
        self.methods = methods
        self.properties = properties
    }
}

/// A named constant of the spec (frame types, sizes, reply codes).
public struct AMQPConstant: Sendable, Equatable {
    public enum ErrorClass: String, Sendable {
        /// Closes the channel.
        case softError = "soft-error"
        /// Closes the connection.
        case hardError = "hard-error"
    }

    public let name: String
    public let value: Int
    /// For reply codes: whether the error closes the channel or the connection.
    public let errorClass: ErrorClass?

    public init(name: String, value: Int, errorClass: ErrorClass?) {
        self.name = name
        self.value = value
        self.errorClass = errorClass
    }
}

extension AMQPSpec {
    /// `routing-key` → `routing_key`.
    package static func snakeCase(_ name: String) -> String {
        String(name.map { $0 == "-" ? "_" : $0 })
    }

    /// `routing-key` → `Routing-Key`.
    package static func titleCase(_ name: String) -> String {
        var out = ""
        var upper = true
        for c in name {
            out.append(upper ? Character(c.uppercased()) : c)
            upper = c == "-"
        }
        return out
    }
}
