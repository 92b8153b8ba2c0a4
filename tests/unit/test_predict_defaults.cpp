// What `ttsim predict` chooses when the user leaves the batch or layout open, and what it refuses.
#include <catch2/catch.hpp>

#include <algorithm>

#include "models/training/predict.hpp"
#include "sim/errors.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {
PredictionRequest request(const std::string& workload, int gpus) {
    return test::prediction_request(workload, "dgx-h100", gpus);
}
const ProfileSet& shipped() { return test::shipped_profile_set(); }
// The request field an InputError names ("" when `r` is accepted).
std::string flag_of(const PredictionRequest& r) {
    try {
        prepare(r);
    } catch (const InputError& e) {
        return e.field() ? std::string(to_string(*e.field())) : "no field: " + e.key();
    }
    return "";
}
}  // namespace

TEST_CASE("default global batch moves smoothly with the GPU count", "[training]") {
    // Between published scales the batch is interpolated, so neighbouring counts get neighbouring batches (no jump
    // to a far-away published layout's batch), and it stays within the RCPs where one sample per rank allows.
    for (const char* workload : {"bert", "retinanet", "stable_diffusion", "llama2_70b_lora"}) {
        double previous_batch = 0;
        int previous_gpus = 0;
        for (int gpus = 16; gpus <= 2048; gpus += 56) {   // 37 counts, multi-node ones included
            const PreparedScenario s = prepare(request(workload, gpus));
            INFO(workload << " at " << gpus << " GPUs: batch " << s.layout.global_batch);
            CHECK(s.layout.global_batch % s.layout.data_parallel == 0);
            // Between neighbouring counts (56 GPUs apart) the batch never shrinks by more than half and never
            // grows faster than the GPU count (or 2x, whichever is more).
            const double batch = s.layout.global_batch;
            if (previous_batch > 0) {
                CHECK(batch >= previous_batch / 2);
                CHECK(batch <= previous_batch * std::max(2.0, static_cast<double>(gpus) / previous_gpus));
            }
            previous_batch = batch;
            previous_gpus = gpus;
        }
    }
    // 264..384 BERT GPUs lie between v4.1's 64- and 3472-GPU layouts: their batches stay between 4608 and 13888
    // (before, 264 and 320 GPUs jumped to 19,008 and 23,040, beyond the RCPs).
    for (int gpus : {264, 288, 320, 352, 384}) {
        const int batch = prepare(request("bert", gpus)).layout.global_batch;
        CHECK(batch >= 4608);
        CHECK(batch <= 13888);
    }
}

TEST_CASE("default BERT and Stable Diffusion time to train falls as GPUs double up to 2,048", "[training]") {
    for (const char* workload : {"bert", "stable_diffusion"}) {
        double previous = 1e300;
        for (int gpus = 8; gpus <= 2048; gpus *= 2) {
            const double ttt = evaluate(prepare(request(workload, gpus)),
                                        shipped().find(find_workload(workload), find_gpu("H100-SXM"))).ttt_minutes;
            INFO(workload << " at " << gpus << " GPUs: " << ttt << " min");
            CHECK(ttt < previous);
            previous = ttt;
        }
    }
}

TEST_CASE("layouts that cannot hold the model state or converge are refused naming the flag", "[training]") {
    PredictionRequest r = request("llama2_70b_lora", 8);
    r.tensor_parallel = 1;
    r.context_parallel = 1;
    r.global_batch = 128;
    CHECK(flag_of(r) == "tensor_parallel");   // 139 GB of weights, gradients and optimizer state on an 80 GB GPU
    r.tensor_parallel = 4;
    CHECK(flag_of(r) == "");
    // 4,096 GPUs at TP4 x CP2 need >= 512 samples per step, beyond 2x the largest LoRA RCP batch (128).
    CHECK(flag_of(request("llama2_70b_lora", 4096)) == "gpus");
    CHECK(flag_of(request("llama2_70b_lora", 2048)) == "");
}

TEST_CASE("tensor/context parallel communication is modelled where it exists and shown", "[training]") {
    PredictionRequest bert = request("bert", 64);
    const Prediction plain = evaluate(prepare(bert), shipped().find(find_workload("bert"), find_gpu("H100-SXM")));
    CHECK(plain.tp_cp_comm_ms == 0);
    bert.tensor_parallel = 8;
    const Prediction tp = evaluate(prepare(bert), shipped().find(find_workload("bert"), find_gpu("H100-SXM")));
    CHECK(tp.tp_cp_comm_ms > 0);
    CHECK(tp.tp_cp_exposed_ms < tp.tp_cp_comm_ms);
    CHECK(tp.compute_ms > tp.tp_cp_exposed_ms);
    const Prediction lora =
        evaluate(prepare(request("llama2_70b_lora", 64)), shipped().find(find_workload("lora"), find_gpu("H100-SXM")));
    CHECK(lora.tp_cp_comm_ms > 0);   // v4.1's TP4 x CP2
    PredictionRequest retinanet = request("retinanet", 64);
    retinanet.tensor_parallel = 2;
    CHECK(flag_of(retinanet) == "tensor_parallel");
    PredictionRequest sd = request("stable_diffusion", 64);
    sd.context_parallel = 2;
    CHECK(flag_of(sd) == "context_parallel");
}
