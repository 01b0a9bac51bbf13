#include "widgets/MemoryBudgetPanel.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/ScaledDialogs.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>

namespace inferscope::widgets {

namespace ex = compute::experiments;

MemoryBudgetPanel::MemoryBudgetPanel(QWidget* parent)
    : LabPanel("memory-budget", tr("Memory budget"),
               tr("How many tokens of context fit beside the weights: (device memory - "
                  "weights) / KV bytes per token, per model, for the GPU size, precisions "
                  "and attention variant chosen below. A bar at the floor does not fit."),
               parent),
      model_(new TableModel(this)) {
    setHorizontalBars(); // long names, listed down the side
    setAxis(Qt::Horizontal, tr("model"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("context tokens that fit (log scale)"), AxisScale::Log);
    addSeries(tr("context tokens"), SeriesKind::Bars);

    auto* row = new QHBoxLayout;
    auto combo = [&](const char* name, const QString& label, const QStringList& items,
                     const QString& tip) {
        row->addWidget(new QLabel(label, this));
        auto* box = new QComboBox(this);
        box->setObjectName(name);
        box->addItems(items);
        box->setToolTip(tip);
        row->addWidget(box);
        connect(box, &QComboBox::currentIndexChanged, this, &MemoryBudgetPanel::rebuild);
        return box;
    };
    gpu_ = combo("budgetGpu", tr("GPU"), {"8 GiB", "16 GiB", "24 GiB", "80 GiB"},
                 tr("Device memory the weights and the cache must share"));
    precision_ = combo("budgetPrecision", tr("Weights"), {"fp16", "int8", "int4"},
                       tr("Bytes per weight: 2, 1 or 0.5 (block scales not counted)"));
    kvPrecision_ = combo("budgetKvPrecision", tr("KV"), {"fp16", "int8", "int4"},
                         tr("Bytes per cached key or value element"));
    variant_ = combo("budgetVariant", tr("Attention"), {"as built", "MHA", "MQA"},
                     tr("KV heads as the model was built, one per query head (MHA), or one "
                        "for all (MQA); the weights stay as built"));
    // Two rows, so the panel fits beside the controls column at presentation scale.
    row->addStretch(1);
    extrasLayout()->addLayout(row);
    row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Context per user"), this));
    context_ = new QSpinBox(this);
    context_->setObjectName("budgetContext");
    context_->setRange(1, 10'000'000);
    context_->setSingleStep(1024);
    context_->setValue(4096);
    context_->setToolTip(tr("Tokens each user holds in the cache; the table counts the users "
                            "that fit at once"));
    row->addWidget(context_);
    connect(context_, &QSpinBox::valueChanged, this, &MemoryBudgetPanel::rebuild);
    auto* add = new QPushButton(tr("Add presets…"), this);
    add->setObjectName("budgetAddPresets");
    add->setToolTip(tr("A JSON file of model shapes, as resources/model-presets.json"));
    connect(add, &QPushButton::clicked, this, [this] {
        const QString path = chooseFileToOpen(this, tr("Model presets"), {}, tr("JSON (*.json)"));
        if (!path.isEmpty()) addPresets(path);
    });
    row->addWidget(add);
    row->addStretch(1);
    extrasLayout()->addLayout(row);

    error_ = new QLabel(this);
    error_->setObjectName("budgetError");
    error_->setWordWrap(true);
    error_->hide();
    extrasLayout()->addWidget(error_);

    auto* view = new QTableView(this);
    view->setObjectName("budgetTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setMaximumHeight(180);
    extrasLayout()->addWidget(view);

    try {
        presets_ = ex::shippedModelPresets();
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
    }
    rebuild();
}

void MemoryBudgetPanel::attach(const PanelContext& context) {
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& loaded) {
        if (!loaded || !loaded->card) return;
        // The device the lab runs on is one more size in the budget.
        if (loaded->deviceBytes)
            setDetectedDevice(QString::fromStdString(loaded->deviceName), loaded->deviceBytes);
        const auto& card = *loaded->card;
        setLoadedModel(
            ex::shapeOf(card.config, card.parameters,
                        loaded->displayName.empty() ? card.config.name : loaded->displayName));
    });
}

void MemoryBudgetPanel::setLoadedModel(std::optional<ex::ModelShape> shape) {
    loaded_ = std::move(shape);
    rebuild();
}

bool MemoryBudgetPanel::addPresets(const QString& path) {
    try {
        auto more = ex::loadModelPresets(path.toStdString());
        presets_.insert(presets_.end(), more.begin(), more.end());
        error_->hide();
        rebuild();
        return true;
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
        return false;
    }
}

void MemoryBudgetPanel::setDetectedDevice(const QString& name, std::uint64_t bytes) {
    detected_ = std::make_pair(name.toStdString(), bytes);
    const QString label =
        tr("%1 (%2)").arg(name, QString::fromStdString(compute::humanBytes(double(bytes))));
    if (gpu_->count() == 4)
        gpu_->addItem(label);
    else
        gpu_->setItemText(4, label);
}

QString MemoryBudgetPanel::errorText() const {
    return error_->isVisible() || !error_->text().isEmpty() ? error_->text() : QString();
}

std::vector<ex::ModelShape> MemoryBudgetPanel::shapes() const {
    std::vector<ex::ModelShape> all;
    if (loaded_) all.push_back(*loaded_);
    all.insert(all.end(), presets_.begin(), presets_.end());
    return all;
}

ex::BudgetQuery MemoryBudgetPanel::query() const {
    ex::BudgetQuery q;
    static const double sizes[] = {8, 16, 24, 80};
    const int gpu = gpu_->currentIndex();
    if (gpu >= 0 && gpu < 4) {
        q.deviceGiB = {sizes[gpu]};
    } else {
        q.deviceGiB = {};
        q.detectedDevice = detected_;
    }
    q.precisions = {precision_->currentText().toStdString()};
    q.kvPrecision = kvPrecision_->currentText().toStdString();
    q.contextPerUser = std::uint32_t(context_->value());
    q.variant = ex::parseKvVariant(variant_->currentText().toStdString());
    return q;
}

std::vector<compute::Table> MemoryBudgetPanel::dataTables() const {
    return tables_;
}

void MemoryBudgetPanel::rebuild() {
    const auto all = shapes();
    if (all.empty()) {
        tables_.clear();
        model_->setTable({});
        setBarValues(ContextTokens, {}, {});
        return;
    }
    try {
        tables_ = ex::memoryBudgetTables(all, query());
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
        return;
    }
    const auto& budget = tables_.back();
    model_->setTable(budget);
    QStringList names;
    QList<qreal> tokens;
    QStringList lines;
    QLocale locale;
    for (std::size_t r = 0; r < budget.rows.size(); ++r) {
        // A preset's name comes from a file: its control characters escaped.
        const auto name = models::printableText(std::get<std::string>(budget.at(r, "model")));
        // On the bars, the name before its description ("Qwen3-0.6B", not "Qwen3-0.6B (Q/K
        // norm, ...)"); the summary and the table keep it whole. Categories must be distinct.
        const QString full = QString::fromStdString(name);
        const QString brief = full.section(" (", 0, 0);
        names << (brief.isEmpty() || names.contains(brief) ? full : brief);
        const double context = budget.number(r, "context tokens");
        tokens << std::max(context, 0.0);
        lines << tr("%1: %2").arg(
            QString::fromStdString(name),
            context > 0 ? tr("%1 tokens, %2 users")
                              .arg(locale.toString(qint64(context)))
                              .arg(locale.toString(qint64(budget.number(r, "users at context"))))
                        : tr("does not fit"));
    }
    setBarValues(ContextTokens, names, tokens);
    setSummary(QString::fromStdString(budget.title.substr(0, budget.title.find(':'))) + " · " +
               lines.join(" · "));
}

} // namespace inferscope::widgets
