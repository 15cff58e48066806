// swift-tools-version:6.1
import PackageDescription

// Microbenchmarks of the framers, decoders and reassembler (package-benchmark), kept in a package of
// their own so that the main build and its test suite do not build the benchmark harness.
//   cd Benchmarks && swift package benchmark
let package = Package(
    name: "proto-dissect-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "proto-dissect", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Decoders",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MQTT", package: "proto-dissect"),
                .product(name: "AMQP", package: "proto-dissect"),
                .product(name: "MQTTViews", package: "proto-dissect"),
                .product(name: "AMQPViews", package: "proto-dissect"),
                .product(name: "Reassembly", package: "proto-dissect"),
                .product(name: "Packets", package: "proto-dissect"),
                .product(name: "Dissection", package: "proto-dissect"),
                .product(name: "Capture", package: "proto-dissect"),
            ],
            path: "Benchmarks/Decoders",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
