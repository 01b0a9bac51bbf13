#pragma once
// Chapter item 14, interactive: weights + KV per token x tokens <= device memory, solved for
// the context tokens and the users that fit, for the loaded model (its real KV heads) and the
// presets of resources/model-presets.json. GPU size, weight and KV precision, context per
// user and the attention variant (as built, MHA, MQA) are one click away; nothing runs on the
// device, so the chart redraws as the controls change.
#include "compute/experiments/budget/MemoryBudget.hpp"
#include "widgets/LabPanel.hpp"

#include <optional>

class QComboBox;
class QLabel;
class QSpinBox;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class MemoryBudgetPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { ContextTokens };

    explicit MemoryBudgetPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs: a loaded model becomes the first row.
    void attach(const PanelContext& context) override;
    void setLoadedModel(std::optional<compute::experiments::ModelShape> shape);
    // Adds the presets of a user's file; false (and the reason in errorText) when refused.
    bool addPresets(const QString& path);
    // The device the lab runs on, offered as one more GPU size.
    void setDetectedDevice(const QString& name, std::uint64_t bytes);
    QString errorText() const;

    QComboBox* gpuBox() const { return gpu_; }
    QComboBox* precisionBox() const { return precision_; }
    QComboBox* kvPrecisionBox() const { return kvPrecision_; }
    QComboBox* variantBox() const { return variant_; }
    QSpinBox* contextBox() const { return context_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();
    std::vector<compute::experiments::ModelShape> shapes() const;
    compute::experiments::BudgetQuery query() const;

    std::optional<compute::experiments::ModelShape> loaded_;
    std::vector<compute::experiments::ModelShape> presets_;
    std::optional<std::pair<std::string, std::uint64_t>> detected_;
    std::vector<compute::Table> tables_;
    TableModel* model_;
    QComboBox* gpu_;
    QComboBox* precision_;
    QComboBox* kvPrecision_;
    QComboBox* variant_;
    QSpinBox* context_;
    QLabel* error_;
};

} // namespace inferscope::widgets
