#include "app/gui/ControlsColumn.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>

namespace inferscope::gui {

ControlsColumn::ControlsColumn(bool backendFixed, QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);

    auto* modelBox = new QGroupBox(tr("Model"), this);
    auto* modelRow = new QHBoxLayout(modelBox);
    modelLabel_ = new QLabel(tr("No model loaded"), modelBox);
    modelLabel_->setObjectName("modelLabel");
    modelLabel_->setWordWrap(true);
    auto* openButton = new QPushButton(tr("Open…"), modelBox);
    openButton->setToolTip(tr("Open a GGUF file or a safetensors folder (Ctrl+O); you can also "
                              "drop one on the window"));
    connect(openButton, &QPushButton::clicked, this, &ControlsColumn::openRequested);
    modelRow->addWidget(modelLabel_, 1);
    modelRow->addWidget(openButton);
    column->addWidget(modelBox);

    auto* backendGroup = new QGroupBox(tr("Backend"), this);
    auto* backendLayout = new QVBoxLayout(backendGroup);
    backendBox_ = new QComboBox(backendGroup);
    backendBox_->setObjectName("backendBox");
    for (const auto& option : compute::availableBackends())
        backendBox_->addItem(QString::fromStdString(option.label),
                             BackendChoice(option.choice).key());
    backendBox_->setToolTip(
        backendFixed ? tr("The backend is fixed by whoever started the window")
                     : tr("Where the transformer runs: a Vulkan device (the GPU engine) or the "
                          "plain CPU reference (the oracle); switching reloads the model"));
    backendBox_->setEnabled(!backendFixed);
    profileCheck_ = new QCheckBox(tr("Profile kernels (GPU timestamps)"), backendGroup);
    profileCheck_->setObjectName("profileKernels");
    profileCheck_->setToolTip(tr("Time every kernel with GPU timestamps; they put a barrier "
                                 "after each dispatch, so steps run slower while this is on"));
    int8Check_ = new QCheckBox(tr("Int8 activations (as llama.cpp's CPU backend)"), backendGroup);
    int8Check_->setObjectName("int8Activations");
    int8Check_->setToolTip(
        tr("Round each 32 activations to 8 bits and multiply integers, on the 4-bit formats "
           "where the device has the 8-lane path (lavapipe); faster prompts and batches, no "
           "longer exact to the stored weights. The backend name says where it applies; "
           "switching reloads the model"));
    backendLayout->addWidget(backendBox_);
    backendLayout->addWidget(profileCheck_);
    backendLayout->addWidget(int8Check_);
    column->addWidget(backendGroup);
    connect(backendBox_, &QComboBox::activated, this,
            [this](int index) { emit backendPicked(backendBox_->itemData(index).toString()); });
    connect(int8Check_, &QCheckBox::clicked, this, &ControlsColumn::int8Toggled);

    auto* promptBox = new QGroupBox(tr("Prompt"), this);
    auto* promptLayout = new QVBoxLayout(promptBox);
    promptEdit_ = new QPlainTextEdit(promptBox);
    promptEdit_->setObjectName("promptEditor");
    promptEdit_->setPlaceholderText(tr("Write a prompt, then Ctrl+Return to generate"));
    promptEdit_->setTabChangesFocus(true);
    chatCheck_ = new QCheckBox(tr("Use the model's chat template"), promptBox);
    chatCheck_->setToolTip(tr("Wrap the prompt as a user turn in the model's chat format "
                              "(ChatML for SmolLM2)"));
    systemEdit_ = new QLineEdit(promptBox);
    systemEdit_->setPlaceholderText(tr("System message (optional, chat only)"));
    connect(chatCheck_, &QCheckBox::toggled, systemEdit_, &QWidget::setEnabled);
    promptLayout->addWidget(promptEdit_, 1);
    promptLayout->addWidget(chatCheck_);
    promptLayout->addWidget(systemEdit_);
    column->addWidget(promptBox, 2);

    auto* samplingBox = new QGroupBox(tr("Sampling"), this);
    auto* form = new QFormLayout(samplingBox);
    greedyCheck_ = new QCheckBox(tr("Greedy (always the most likely token)"), samplingBox);
    temperatureSpin_ = new QDoubleSpinBox(samplingBox);
    temperatureSpin_->setRange(0.0, 5.0);
    temperatureSpin_->setSingleStep(0.1);
    topKSpin_ = new QSpinBox(samplingBox);
    topKSpin_->setRange(0, 1000);
    topKSpin_->setSpecialValueText(tr("off"));
    topPSpin_ = new QDoubleSpinBox(samplingBox);
    topPSpin_->setRange(0.0, 1.0);
    topPSpin_->setSingleStep(0.05);
    seedSpin_ = new QSpinBox(samplingBox);
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    repeatPenaltySpin_ = new QDoubleSpinBox(samplingBox);
    repeatPenaltySpin_->setRange(0.5, 3.0);
    repeatPenaltySpin_->setSingleStep(0.05);
    maxTokensSpin_ = new QSpinBox(samplingBox);
    maxTokensSpin_->setObjectName("maxTokens");
    maxTokensSpin_->setRange(1, 4096);
    for (auto* box :
         std::initializer_list<QWidget*>{temperatureSpin_, topKSpin_, topPSpin_, seedSpin_})
        connect(greedyCheck_, &QCheckBox::toggled, box,
                [box](bool greedy) { box->setEnabled(!greedy); });
    form->addRow(greedyCheck_);
    form->addRow(tr("Temperature"), temperatureSpin_);
    form->addRow(tr("Top-k"), topKSpin_);
    form->addRow(tr("Top-p"), topPSpin_);
    form->addRow(tr("Seed"), seedSpin_);
    form->addRow(tr("Repetition penalty"), repeatPenaltySpin_);
    form->addRow(tr("Max new tokens"), maxTokensSpin_);
    column->addWidget(samplingBox);

    auto* buttons = new QHBoxLayout;
    generateButton_ = new QPushButton(tr("Generate"), this);
    generateButton_->setObjectName("generateButton");
    generateButton_->setToolTip(tr("Generate (Ctrl+Return)"));
    stopButton_ = new QPushButton(tr("Stop"), this);
    stopButton_->setObjectName("stopButton");
    stopButton_->setToolTip(tr("Stop after the current token (Esc)"));
    connect(generateButton_, &QPushButton::clicked, this, &ControlsColumn::generateRequested);
    connect(stopButton_, &QPushButton::clicked, this, &ControlsColumn::stopRequested);
    buttons->addWidget(generateButton_);
    buttons->addWidget(stopButton_);
    column->addLayout(buttons);

    auto* outputBox = outputBox_ = new QGroupBox(tr("Output"), this);
    outputBox->setObjectName("outputBox");
    auto* outputLayout = new QVBoxLayout(outputBox);
    outputEdit_ = new QPlainTextEdit(outputBox);
    outputEdit_->setObjectName("output");
    outputEdit_->setReadOnly(true);
    outputLayout->addWidget(outputEdit_);
    column->addWidget(outputBox, 3);
}

void ControlsColumn::applySettings(const GuiSettings& settings) {
    promptEdit_->setPlainText(settings.prompt);
    systemEdit_->setText(settings.systemPrompt);
    chatCheck_->setChecked(settings.chat);
    systemEdit_->setEnabled(settings.chat);
    greedyCheck_->setChecked(settings.greedy);
    temperatureSpin_->setValue(settings.temperature);
    topKSpin_->setValue(settings.topK);
    topPSpin_->setValue(settings.topP);
    seedSpin_->setValue(settings.seed);
    repeatPenaltySpin_->setValue(settings.repeatPenalty);
    maxTokensSpin_->setValue(settings.maxTokens);
    for (auto* box :
         std::initializer_list<QWidget*>{temperatureSpin_, topKSpin_, topPSpin_, seedSpin_})
        box->setEnabled(!settings.greedy);
    profileCheck_->setChecked(settings.profileKernels);
    int8Check_->setChecked(settings.int8Activations);
}

void ControlsColumn::readSettings(GuiSettings& settings) const {
    settings.prompt = promptEdit_->toPlainText();
    settings.systemPrompt = systemEdit_->text();
    if (chatCheck_->isEnabled()) settings.chat = chatCheck_->isChecked();
    settings.greedy = greedyCheck_->isChecked();
    settings.temperature = temperatureSpin_->value();
    settings.topK = topKSpin_->value();
    settings.topP = topPSpin_->value();
    settings.seed = seedSpin_->value();
    settings.repeatPenalty = repeatPenaltySpin_->value();
    settings.maxTokens = maxTokensSpin_->value();
    settings.profileKernels = profileCheck_->isChecked();
}

compute::GenerationRequest ControlsColumn::request() const {
    compute::GenerationRequest request;
    request.prompt = promptEdit_->toPlainText().toStdString();
    request.chat = chatCheck_->isEnabled() && chatCheck_->isChecked();
    request.systemPrompt = systemEdit_->text().toStdString();
    request.maxNewTokens = maxTokensSpin_->value();
    request.sampling.greedy = greedyCheck_->isChecked();
    request.sampling.temperature = static_cast<float>(temperatureSpin_->value());
    request.sampling.topK = topKSpin_->value();
    request.sampling.topP = static_cast<float>(topPSpin_->value());
    request.sampling.seed = static_cast<std::uint64_t>(seedSpin_->value());
    request.sampling.repeatPenalty = static_cast<float>(repeatPenaltySpin_->value());
    request.kernelTimings = profileCheck_->isChecked();
    return request;
}

void ControlsColumn::setState(bool canGenerate, bool generating, bool chatAvailable,
                              bool canPickInt8) {
    generateButton_->setEnabled(canGenerate);
    stopButton_->setEnabled(generating);
    chatCheck_->setEnabled(chatAvailable);
    int8Check_->setEnabled(canPickInt8);
}

void ControlsColumn::appendOutput(const QString& text) {
    outputEdit_->moveCursor(QTextCursor::End);
    outputEdit_->insertPlainText(text);
    outputEdit_->ensureCursorVisible();
}

void ControlsColumn::setOutput(const QString& text) {
    outputEdit_->setPlainText(text);
}

void ControlsColumn::setOutputSource(const QString& source) {
    outputBox_->setTitle(source.isEmpty() ? tr("Output") : tr("Output of %1").arg(source));
    outputBox_->setToolTip(outputBox_->title());
}

QString ControlsColumn::outputTitle() const {
    return outputBox_->title();
}

void ControlsColumn::setModelLine(const QString& html, const QString& tooltip) {
    modelLabel_->setText(html);
    modelLabel_->setToolTip(tooltip);
}

QString ControlsColumn::modelLine() const {
    return modelLabel_->text();
}

int ControlsColumn::selectBackend(const QString& key) {
    const int index = backendBox_->findData(key);
    if (index >= 0) backendBox_->setCurrentIndex(index);
    return index;
}

QString ControlsColumn::currentBackendKey() const {
    return backendBox_->currentData().toString();
}

} // namespace inferscope::gui
