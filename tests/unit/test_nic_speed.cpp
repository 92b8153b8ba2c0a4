// NIC speeds as a what-if: a generation name (hdr, ndr, xdr) or any bandwidth in the project's units, in every
// place that takes a NIC (presets, the collective CLI and scenarios, YAML topologies, sweeps), and the physics it
// must keep: a slower NIC never makes a collective or a training run faster, and no collective beats the bandwidth
// its NICs can carry.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "tests/unit/prediction_helpers.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {

// The what-if rates of the task, ascending: 100 Gb/s (HDR100 / EDR-class), HDR 200, NDR 400, XDR 800 Gb/s.
const std::vector<std::string> kRatesAscending = {"100Gb/s", "hdr", "ndr", "xdr"};

std::string error_of(const std::string& text) {
    try {
        (void)parse_nic_speed(text);
    } catch (const InputError& e) {
        return e.message();
    }
    return "";
}

}  // namespace

TEST_CASE("NIC speeds: generation names, aliases and bandwidths with units", "[nic]") {
    CHECK(parse_nic_speed("hdr") == NicSpeed::Hdr200);
    CHECK(parse_nic_speed("hdr200") == NicSpeed::Hdr200);
    CHECK(parse_nic_speed("ndr") == NicSpeed::Ndr400);
    CHECK(parse_nic_speed("ndr400") == NicSpeed::Ndr400);
    CHECK(parse_nic_speed("xdr") == NicSpeed::Xdr800);
    CHECK(parse_nic_speed("xdr800") == NicSpeed::Xdr800);
    CHECK(NicSpeed::Hdr200.bytes_per_second == 25e9);   // 200 Gb/s = 25 GB/s per direction
    CHECK(NicSpeed::Ndr400.bytes_per_second == 50e9);
    CHECK(NicSpeed::Xdr800.bytes_per_second == 100e9);
    CHECK(FabricOptions{}.nic == NicSpeed::Ndr400);   // the default is unchanged

    // Bits or bytes per second, as everywhere else (sim/units.hpp); a named rate prints as its name.
    CHECK(parse_nic_speed("200Gb/s") == NicSpeed::Hdr200);
    CHECK(parse_nic_speed("25GB/s") == NicSpeed::Hdr200);
    CHECK(parse_nic_speed("400Gb/s") == NicSpeed::Ndr400);
    CHECK(parse_nic_speed("0.8Tb/s") == NicSpeed::Xdr800);
    CHECK(parse_nic_speed("100Gb/s").bytes_per_second == 12.5e9);
    CHECK(parse_nic_speed("200Gb/s").label() == "hdr");
    CHECK(parse_nic_speed("100Gb/s").label() == "100Gb/s");
    CHECK(parse_nic_speed("1.6Tb/s").label() == "1600Gb/s");
    CHECK(parse_nic_speed("12.5GB/s").label() == "100Gb/s");
    CHECK(NicSpeed::Hdr200.description() == "HDR 200G");
    CHECK(parse_nic_speed("100Gb/s").description() == "100Gb/s");
    // Beyond the fastest named generation the description says how far (400GB/s is bytes: eight times 400Gb/s).
    CHECK(parse_nic_speed("400GB/s").description() == "3200Gb/s (4x XDR 800G)");
    CHECK(parse_nic_speed("800Gb/s").description() == "XDR 800G");
    // A label reads back as the same speed (outputs can be pasted into scenarios).
    for (const std::string text : {"hdr", "ndr", "xdr", "100Gb/s", "1.6Tb/s", "300Gb/s", "1Gb/s", "3.2Tb/s"})
        CHECK(parse_nic_speed(parse_nic_speed(text).label()) == parse_nic_speed(text));

    // Impossible or ambiguous values are refused, saying what is accepted.
    CHECK_THAT(error_of("0Gb/s"), Catch::Contains("must be positive"));
    CHECK_THAT(error_of("-200Gb/s"), Catch::Contains("must be positive"));
    CHECK_THAT(error_of("3.3Tb/s"), Catch::Contains("outside the physical range 1Gb/s to 3.2Tb/s"));
    CHECK_THAT(error_of("1PB/s"), Catch::Contains("outside the physical range"));
    CHECK_THAT(error_of("500Mb/s"), Catch::Contains("outside the physical range"));
    CHECK_THAT(error_of("400"), Catch::Contains("no unit"));
    CHECK_THAT(error_of("200Gbps"), Catch::Contains("unknown bandwidth unit"));
    CHECK_THAT(error_of("nanGb/s"), Catch::Contains("NIC speed"));
    CHECK_THAT(error_of("edr"), Catch::Contains("unknown NIC speed 'edr'") && Catch::Contains("hdr (200Gb/s)") &&
                                    Catch::Contains("25GB/s"));
    CHECK_THAT(error_of(""), Catch::Contains("unknown NIC speed"));
    CHECK_THROWS_AS(build_preset("dgx-h100", 16, {.nic = NicSpeed{0}}), InputError);
    CHECK_THROWS_AS(build_preset("dgx-h100", 16, {.nic = NicSpeed{1e15}}), InputError);
}

TEST_CASE("NIC speed sets the host-to-leaf links, switch radix and latency stay", "[nic][topology]") {
    const Topology ndr = build_preset("dgx-h100", 512);
    for (const std::string text : {"100Gb/s", "hdr", "300Gb/s", "xdr", "1.6Tb/s"}) {
        INFO(text);
        const NicSpeed nic = parse_nic_speed(text);
        const Topology t = build_preset("dgx-h100", 512, {.nic = nic});
        const GpuInfo& g = t.gpu(77);
        CHECK(t.out_bandwidth(g.nic, VertexKind::LeafSwitch) == Approx(nic.bytes_per_second));
        // The fabric: same switches, every port at the NIC's rate, leaves still non-blocking.
        CHECK(t.summary().leaf_switches == ndr.summary().leaf_switches);
        CHECK(t.summary().spine_switches == ndr.summary().spine_switches);
        const Vertex leaf = t.vertices_of_kind(VertexKind::LeafSwitch).front();
        CHECK(t.out_bandwidth(leaf, VertexKind::SpineSwitch) == Approx(32 * nic.bytes_per_second));
        // GPU -> NIC: PCIe Gen5 x16 (63 GB/s) while it carries the NIC, Gen6 x16 (126 GB/s) up to XDR, and
        // never below the NIC's rate.
        const double pcie = t.link(g.pcie_up).bandwidth_bytes_per_s;
        CHECK(pcie >= nic.bytes_per_second);
        CHECK(pcie == Approx(nic.bytes_per_second <= 63e9 ? 63e9 : nic.bytes_per_second <= 126e9 ? 126e9
                                                                                               : nic.bytes_per_second));
        // Latencies are those of today's fabric.
        CHECK(t.link(g.pcie_up).latency == ndr.link(ndr.gpu(77).pcie_up).latency);
    }
}

TEST_CASE("A YAML topology preset takes any NIC speed", "[nic][topology]") {
    const auto node = ConfigNode::load_string("preset: {system: dgx-h100, gpus: 16, nic: 200Gb/s}\n", "hdr.yaml");
    const Topology t = load_topology(node);
    CHECK(t.out_bandwidth(t.gpu(0).nic, VertexKind::LeafSwitch) == Approx(25e9));
    try {
        (void)load_topology(ConfigNode::load_string("preset: {system: dgx-h100, gpus: 16,\n  nic: 0Gb/s}\n", "z.yaml"));
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("z.yaml:2") && Catch::Contains("nic") &&
                                              Catch::Contains("must be positive"));
    }
}

TEST_CASE("A slower NIC never makes an all-reduce across nodes faster, nor beats its bandwidth bound",
          "[nic][collective]") {
    const double bytes = 1 << 30;   // 1 GiB
    for (int gpus : {64, 256}) {
        for (const bool sharp : {false, true}) {
            for (const CollectiveAlgorithm algorithm :
                 {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree}) {
                SimTime previous = SimTime::max();
                for (const std::string& text : kRatesAscending) {
                    const NicSpeed nic = parse_nic_speed(text);
                    const Topology topo = build_preset("dgx-h100", gpus, {.nic = nic});
                    CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = sharp});
                    CollectiveRequest request;
                    request.bytes = static_cast<std::uint64_t>(bytes);
                    request.algorithm = algorithm;
                    const CollectiveResult r = sim.run(request);
                    INFO(gpus << " GPUs, SHARP " << sharp << ", " << to_string(algorithm) << ", NIC " << text
                              << ": " << r.duration.seconds() * 1e3 << " ms");
                    CHECK(r.duration <= previous);   // faster NIC: never slower
                    CHECK(r.duration >= r.lower_bound);
                    // Every byte of a node's contribution leaves through its 8 NICs, and the result comes back in
                    // through them (SHARP or not): S / (8 x NIC rate) is a floor no algorithm beats.
                    CHECK(r.duration.seconds() >= bytes / (8 * nic.bytes_per_second));
                    CHECK(r.lower_bound.seconds() >= bytes / (8 * nic.bytes_per_second) * (1 - 1e-9));
                    previous = r.duration;
                }
            }
        }
    }
}

TEST_CASE("Sweep network options take NIC speeds, predictions and outputs follow them", "[nic][planning]") {
    const auto text = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [256]\n"
        "network: [{nic: 100Gb/s}, {nic: 200Gb/s}, {nic: ndr}, {nic: xdr}, {nic: 25GB/s, sharp: false}]\n",
        "nics.yaml");
    const SweepScenario s = read_sweep_scenario(text);
    REQUIRE(s.spec.networks.size() == 5);
    CHECK(s.spec.networks[0].name == "100Gb/s");
    CHECK(s.spec.networks[1].name == "hdr");
    CHECK(s.spec.networks[2].name == "default");
    CHECK(s.spec.networks[3].name == "xdr");
    CHECK(s.spec.networks[4].name == "hdr-nosharp");
    const std::vector<SweepPoint> points = expand_sweep(s.spec);
    REQUIRE(points.size() == 5);
    // Each point's collectives run on a fabric of its NIC's rate (ndr: the system's own 400 Gb/s).
    const double rates[] = {12.5e9, 25e9, 50e9, 100e9};
    for (std::size_t i = 0; i < 4; ++i) {
        const PreparedScenario prepared = prepare(point_request(points[i], std::nullopt));
        CHECK(prepared.system.fabric.nic.bytes_per_second == rates[i]);
        const Topology t = build_topology(prepared.system, points[i].gpus);
        CHECK(t.out_bandwidth(t.gpu(0).nic, VertexKind::LeafSwitch) == Approx(rates[i]));
    }

    const SweepResult result = run_sweep(points, test::shipped_profile_set(), SweepOptions{});
    REQUIRE(result.points.size() == 5);
    for (std::size_t i = 0; i < 4; ++i) REQUIRE(result.points[i].outcome.ok);
    // Training: a faster NIC never lengthens the time to train nor exposes more communication.
    for (std::size_t i = 1; i < 4; ++i) {
        INFO(points[i].network.name);
        CHECK(result.points[i].outcome.prediction.ttt_minutes <= result.points[i - 1].outcome.prediction.ttt_minutes);
        CHECK(result.points[i].outcome.prediction.exposed_comm_ms <=
              result.points[i - 1].outcome.prediction.exposed_comm_ms);
    }
    CHECK(result.points[0].outcome.prediction.exposed_comm_ms > result.points[2].outcome.prediction.exposed_comm_ms);

    // Outputs name the speed: the `nic` column keeps ndr/xdr and reads hdr or the rate for the others.
    const std::string csv = format_sweep_csv(result);
    CHECK_THAT(csv, Catch::Contains(",100Gb/s,100Gb/s,default,") && Catch::Contains(",hdr,hdr,default,") &&
                        Catch::Contains(",default,ndr,default,") && Catch::Contains(",xdr,xdr,default,") &&
                        Catch::Contains(",hdr-nosharp,hdr,off,"));
    const auto json = nlohmann::json::parse(format_sweep_json("sweep", "t", result));
    CHECK(json["points"][0]["network"]["nic"] == "100Gb/s");
    CHECK(json["points"][0]["network"]["nic_gbit_per_s"] == 100.0);
    CHECK(json["points"][1]["network"]["nic"] == "hdr");
    CHECK(json["points"][1]["network"]["nic_gbit_per_s"] == 200.0);
    CHECK(json["points"][2]["network"]["nic"] == "ndr");

    // Errors name the key and line.
    const auto bad = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [16]\nnetwork:\n  - {nic: 5Tb/s}\n", "bad.yaml");
    try {
        (void)read_sweep_scenario(bad);
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("bad.yaml:6") && Catch::Contains("network[0].nic") &&
                                              Catch::Contains("outside the physical range 1Gb/s to 3.2Tb/s"));
    }
    // The same speed twice is the same network, refused as a duplicate name.
    const auto twice = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [16]\nnetwork: [{nic: hdr}, {nic: 25GB/s}]\n",
        "twice.yaml");
    CHECK_THROWS_AS(read_sweep_scenario(twice), InputError);
}
