// The layers of the iteration (IterationPlan::layers, iteration.hpp) from the operator model's pricing of one micro
// step (operator_step.hpp) and the layout's tensor/context-parallel collectives (step_collectives.hpp): each
// layer's kernels, and after them, at the layers that carry collectives (the table's transformer blocks), the
// exposed share of those collectives, as shares of the forward and backward passes.
#pragma once

#include <cstddef>
#include <vector>

#include "models/training/iteration.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/step_collectives.hpp"

namespace ttsim {

struct LayerSchedule {
    std::vector<IterationLayer> layers;          // forward order, one per OperatorTable layer
    std::vector<IterationCollective> collectives;   // of each layer with IterationLayer::collectives
    // The compute stream's wait on the exposed collectives of one micro step, forward and backward passes, seconds.
    double exposed_forward_seconds = 0, exposed_backward_seconds = 0;
    // Each gradient bucket's ready point (IterationPlan::bucket_ready_fractions): the backward_kernels_end of the
    // layer that completes it (operator_step.hpp bucket_completing_layers); 1 for the last.
    std::vector<double> bucket_ready_fractions;
};

// `collectives` are one layer's (StepCollectives::layer_collectives), carried by each of the table's `collective_layers`
// blocks (checked: the table must have that many blocks when there are collectives); `exposed_fraction` of each
// blocks the compute stream. Without collectives the ready points equal bucket_ready_fractions(step, buckets).
LayerSchedule layer_schedule(const OperatorTable& table, const OperatorStepTimes& step,
                             const std::vector<LayerCollective>& collectives, int collective_layers,
                             double exposed_fraction, std::size_t buckets);

}  // namespace ttsim
