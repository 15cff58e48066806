#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Boxes of PDUs that were used and let go, kept per thread for the next PDUs a decoder's
/// facts view makes: a box costs an allocation to make and a free to let go, a box from here a
/// few stores.
///
/// A box comes here only from `DissectedPDU.recycle`, and only when nothing else holds it; it is
/// taken again by one PDU, which then holds it alone. Each thread has its own pool.
enum PDUPool {
    /// At most this many boxes are kept per thread.
    static let maxSpares = 256

    final class Spares {
        // Each thread has its own pool (a thread-specific key), and no access to it calls back into the pool.
        @exclusivity(unchecked) var boxes: [DissectedPDU.Storage] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<Spares>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<Spares>.fromOpaque(pointer).release() }
            #endif
        }
        return key
    }()

    /// This thread's pool, made on first use, lent to `body` (the thread's key holds it: no
    /// reference is counted per use, and a box is taken per PDU).
    static func withCurrent<R>(_ body: (Spares) -> R) -> R {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Spares>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        let spares = Spares()
        pthread_setspecific(key, Unmanaged.passRetained(spares).toOpaque())
        return body(spares)
    }

    /// This thread's pool (for the tests).
    static var current: Spares { withCurrent { $0 } }

    /// A box nothing else holds, if the pool has one.
    @usableFromInline static func take() -> DissectedPDU.Storage? {
        withCurrent { $0.boxes.popLast() }
    }
}

extension DissectedPDU {
    /// How many boxes a thread's pool keeps: a caller that makes PDUs a part at a time, parts no
    /// larger than this, has every box of one part reused by the next.
    public static var pooledBoxes: Int { PDUPool.maxSpares }

    /// Empties `pdus` (keeping its capacity), handing the boxes that nothing else holds (a
    /// renderer that kept a PDU still holds its box) to this thread's pool, for the PDUs made
    /// next. What a caller does with the PDUs it still holds is not affected.
    public static func recycle(_ pdus: inout [DissectedPDU]) {
        guard !pdus.isEmpty else { return }
        PDUPool.withCurrent { spares in
            // Each PDU moved out of the array (its box is then handed over, not copied and let
            // go), from the last; the array keeps its capacity.
            while var pdu = pdus.popLast() {
                guard spares.boxes.count < PDUPool.maxSpares else { continue }
                guard isKnownUniquelyReferenced(&pdu.storage) else { continue }
                spares.boxes.append((consume pdu).storage)
            }
        }
    }
}
