#include "ui/panels/parameter_control.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <QEvent>
#include <QFocusEvent>
#include <QGridLayout>
#include <QKeyEvent>
#include <QPainter>
#include <QStyle>
#include <QStyleOptionFrame>
#include <QVBoxLayout>

#include "engine/base/input_error.h"

namespace samplescope::ui {

std::optional<double> parseNumberText(const QString& text) {
    const std::string trimmed = text.trimmed().toStdString();
    if (trimmed.empty()) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(trimmed.c_str(), &end);
    if (end != trimmed.c_str() + trimmed.size()) return std::nullopt;
    return value;
}

namespace {

QString viewOf(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<int>(text.size())); }

// Setting a style sheet re-polishes the widget even when the sheet is the
// same, and every trace refreshes every badge: set it only when it changes.
void setSheet(QWidget* widget, const QString& sheet) {
    if (widget->styleSheet() != sheet) widget->setStyleSheet(sheet);
}

const QString kWidestValue = QStringLiteral("-0.00001");
const QString kRefusedBorder = QStringLiteral("border: 2px solid #B00020;");

// Every text a badge shows (ParameterPanel::refreshStates), the widest deciding its width: the contract's
// knobs' badges, and those of llama.cpp's group.
const QStringList& contractBadgeTexts() {
    static const QStringList texts{QStringLiteral("on"), QStringLiteral("off"), QStringLiteral("greedy"),
                                   QStringLiteral("off (>= V)"), QStringLiteral("no effect")};
    return texts;
}
const QStringList& badgeTexts() {
    static const QStringList texts{
        QStringLiteral("on"),          QStringLiteral("off"),         QStringLiteral("greedy"),
        QStringLiteral("off (>= V)"),  QStringLiteral("used"),        QStringLiteral("unused"),
        QStringLiteral("v2"),          QStringLiteral("off (t > 0.5)"), QStringLiteral("off (> 0.5)"),
        QStringLiteral("off (last N 0)"), QStringLiteral("off (0)"),  QStringLiteral("none"),
        QStringLiteral("no effect")};
    return texts;
}

}  // namespace

void EntryBox::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Escape) {
        emit escapePressed();
        event->accept();
        return;
    }
    QLineEdit::keyPressEvent(event);
}

void EntryBox::focusOutEvent(QFocusEvent* event) {
    QLineEdit::focusOutEvent(event);  // emits editingFinished for an edited text first
    emit focusLeft();
}

MessageLine::MessageLine(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    setFixedHeight(fontMetrics().height() + 4);
}

QSize MessageLine::sizeHint() const { return {40, fontMetrics().height() + 4}; }
QSize MessageLine::minimumSizeHint() const { return sizeHint(); }

void MessageLine::setMessage(const QString& text, const QColor& color, bool italic) {
    if (text == text_ && color == color_ && italic == italic_) return;
    text_ = text;
    color_ = color;
    italic_ = italic;
    setToolTip(text.isEmpty() ? QString() : text);
    update();
}

void MessageLine::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    QFont f = font();
    f.setItalic(italic_);
    painter.setFont(f);
    painter.setPen(color_);
    const QFontMetrics metrics(f);
    const QRect area = rect().adjusted(2, 0, -2, 0);
    painter.drawText(area, Qt::AlignLeft | Qt::AlignVCenter, metrics.elidedText(text_, Qt::ElideRight, area.width()));
}

int entryWidthFor(const QLineEdit* entry, const QString& sample) {
    const QFontMetrics metrics(entry->font());
    QStyleOptionFrame option;
    option.initFrom(entry);
    option.lineWidth = entry->style()->pixelMetric(QStyle::PM_DefaultFrameWidth, &option, entry);
    const QMargins margins = entry->textMargins();
    // QLineEdit's own horizontal margin is 2 px each side; 4 px spare for the cursor and a refused value's border.
    const int text = metrics.horizontalAdvance(sample) + 2 * 2 + margins.left() + margins.right() + 4;
    return entry->style()->sizeFromContents(QStyle::CT_LineEdit, &option, QSize(text, metrics.height()), entry).width();
}

int badgeWidth(const QLabel* badge, bool contract) {
    QFont bold = badge->font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    int widest = 0;
    for (const auto& text : contract ? contractBadgeTexts() : badgeTexts()) widest = std::max(widest, metrics.horizontalAdvance(text));
    return widest + 4;
}

QString typedValueError(const ParamInfo& info, const QString& typed) {
    const QString text = typed.trimmed();
    const auto value = parseNumberText(text);
    if (!value) return QStringLiteral("%1 must be a number, got \"%2\"").arg(viewOf(info.key), text);
    const auto error = param_error(info.param, *value);
    if (!error) return QString();
    // param_error ends with ", got <the parsed value>": quote the typed text instead.
    QString message = QString::fromStdString(*error);
    const QString parsed = QStringLiteral(", got ") + QString::fromStdString(format_number(*value));
    if (message.endsWith(parsed)) message.chop(parsed.size());
    return message + QStringLiteral(", got \"%1\"").arg(text);
}

ParameterControl::ParameterControl(const ParamInfo& info, QGridLayout* grid, int row, QWidget* parent)
    : QObject(parent), info_(info), value_(info.default_value) {
    name_ = new QLabel(viewOf(info.label), parent);
    slider_ = new QSlider(Qt::Horizontal, parent);
    slider_->setObjectName(QStringLiteral("slider_%1").arg(viewOf(info.key)));
    slider_->setRange(0, positionOf(info.slider_max));
    slider_->setMinimumWidth(70);
    entry_ = new EntryBox(parent);
    entry_->setObjectName(QStringLiteral("entry_%1").arg(viewOf(info.key)));
    // Wide enough for the longest value a user plausibly types ("0.0001", "1e999", "-0.0001"); a longer one
    // scrolls inside the box, whose size never follows its text. Fixed height: a red border changes no size.
    entry_->setFixedWidth(entryWidthFor(entry_, kWidestValue));
    entry_->setFixedHeight(entry_->sizeHint().height());
    state_ = new QLabel(parent);
    state_->setObjectName(QStringLiteral("state_%1").arg(viewOf(info.key)));
    state_->setFixedWidth(badgeWidth(state_, static_cast<std::size_t>(info.param) < kContractParamCount));
    for (QWidget* widget : {static_cast<QWidget*>(name_), static_cast<QWidget*>(slider_),
                            static_cast<QWidget*>(entry_), static_cast<QWidget*>(state_)}) {
        widget->installEventFilter(this);
    }
    grid->addWidget(name_, row, 0);
    grid->addWidget(slider_, row, 1);
    grid->addWidget(entry_, row, 2);
    grid->addWidget(state_, row, 3);
    connect(slider_, &QSlider::valueChanged, this, &ParameterControl::onSlider);
    connect(entry_, &QLineEdit::editingFinished, this, &ParameterControl::onEntry);
    connect(entry_, &EntryBox::escapePressed, this, &ParameterControl::restore);
    connect(entry_, &EntryBox::focusLeft, this, [this] {
        if (error_.isEmpty()) return;
        const QString typed = entry_->text().trimmed();
        restore();
        emit restoredAfterRefusal(QStringLiteral("%1 stays %2 (\"%3\" was refused)")
                                      .arg(key(), QString::fromStdString(format_number(value_)), typed));
    });
    setValue(info.default_value);
}

QString ParameterControl::key() const { return viewOf(info_.key); }

QString ParameterControl::tooltip() const {
    return QStringLiteral("<b>%1</b> (%2) = %3<br>%4<br>Valid: %5. Default: %6.<br><i>Enter applies a typed value; "
                          "Esc restores the value in force.</i>")
        .arg(viewOf(info_.label), viewOf(info_.key), QString::fromStdString(format_number(value_)),
             viewOf(info_.formula).toHtmlEscaped(), viewOf(info_.valid_range).toHtmlEscaped(),
             QString::fromStdString(format_number(info_.default_value)));
}

bool ParameterControl::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Enter) emit hovered(true);
    if (event->type() == QEvent::Leave) emit hovered(false);
    return QObject::eventFilter(watched, event);
}

double ParameterControl::step() const { return info_.integer() ? 1.0 : 0.01; }

int ParameterControl::positionOf(double value) const {
    const double clamped = std::clamp(value, info_.slider_min, info_.slider_max);
    return static_cast<int>(std::lround((clamped - info_.slider_min) / step()));
}

void ParameterControl::setValue(double value) {
    value_ = value;
    const QSignalBlocker block(slider_);
    slider_->setValue(positionOf(value));
    entry_->setText(QString::fromStdString(format_number(value)));
    entry_->setCursorPosition(0);
    showError(QString());
}

void ParameterControl::restore() {
    entry_->setText(QString::fromStdString(format_number(value_)));
    entry_->setCursorPosition(0);
    showError(QString());
}

void ParameterControl::setState(const QString& text, bool active) {
    state_text_ = text;
    state_active_ = active;
    showBadge();
}

void ParameterControl::setNote(const QString& reason) {
    if (reason == note_) return;
    note_ = reason;
    showBadge();
}

void ParameterControl::showBadge() {
    const bool noted = !note_.isEmpty();
    state_->setText(noted ? QStringLiteral("no effect") : state_text_);
    setSheet(state_, state_active_ && !noted ? QStringLiteral("color: #0072B2; font-weight: bold;")
                                             : QStringLiteral("color: #777777; font-style: italic;"));
    state_->setToolTip(noted ? QStringLiteral("No effect now: %1").arg(note_.toHtmlEscaped())
                             : QStringLiteral("Whether this step changes anything (the contract's off values)."));
    const QString tip = tooltip();
    name_->setToolTip(tip);
    slider_->setToolTip(tip);
    entry_->setToolTip(error_.isEmpty() ? tip : error_.toHtmlEscaped() + QStringLiteral("<hr>") + tip);
}

void ParameterControl::showError(const QString& message) {
    const bool changed = message != error_;
    error_ = message;
    setSheet(entry_, message.isEmpty() ? QString() : kRefusedBorder);
    showBadge();
    if (changed) emit errorChanged(message);
}

void ParameterControl::onSlider(int position) {
    // Round to the step so a slider never produces 0.30000000000000004.
    const double raw = info_.slider_min + static_cast<double>(position) * step();
    const double value = info_.integer() ? std::round(raw) : std::round(raw * 100.0) / 100.0;
    value_ = value;
    entry_->setText(QString::fromStdString(format_number(value)));
    showError(QString());
    emit valueEdited(info_.param, value);
}

void ParameterControl::onEntry() {
    const QString text = entry_->text();
    if (const QString message = typedValueError(info_, text); !message.isEmpty()) {
        showError(message);
        return;
    }
    const double value = *parseNumberText(text);
    showError(QString());
    entry_->setCursorPosition(0);
    if (value == value_) return;
    value_ = value;
    {
        const QSignalBlocker block(slider_);
        slider_->setValue(positionOf(value));
    }
    showBadge();
    emit valueEdited(info_.param, value);
}

TextParameterControl::TextParameterControl(const QString& key, const QString& label, const QString& tooltip,
                                           QGridLayout* grid, int row, QWidget* parent)
    : QObject(parent), key_(key) {
    auto* name = new QLabel(label, parent);
    name->setToolTip(tooltip);
    entry_ = new EntryBox(parent);
    entry_->setObjectName(QStringLiteral("entry_%1").arg(key));
    entry_->setToolTip(tooltip);
    entry_->setClearButtonEnabled(true);
    entry_->setFixedHeight(entry_->sizeHint().height());
    entry_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    entry_->setMinimumWidth(entryWidthFor(entry_, kWidestValue));
    state_ = new QLabel(parent);
    state_->setObjectName(QStringLiteral("state_%1").arg(key));
    state_->setFixedWidth(badgeWidth(state_, false));
    state_->setToolTip(QStringLiteral("Whether this step changes anything (off when empty)."));
    // A reserved line: a note appearing or going never moves the rows below (the full text is its tooltip).
    note_ = new MessageLine(parent);
    note_->setObjectName(QStringLiteral("note_%1").arg(key));
    grid->addWidget(name, row, 0);
    grid->addWidget(entry_, row, 1, 1, 2);
    grid->addWidget(state_, row, 3);
    grid->addWidget(note_, row + 1, 0, 1, 4);
    connect(entry_, &QLineEdit::editingFinished, this, [this] {
        // editingFinished also fires on focus loss: an unchanged text is no edit.
        if (entry_->text() == shown_ && error().isEmpty()) return;
        shown_ = entry_->text();
        emit textEdited(key_, entry_->text());
    });
    connect(entry_, &EntryBox::escapePressed, this, &TextParameterControl::restore);
    connect(entry_, &EntryBox::focusLeft, this, [this] {
        if (!error_.isEmpty()) restore();
    });
}

void TextParameterControl::setText(const QString& text) {
    shown_ = text;
    in_force_ = text;
    entry_->setText(text);
    entry_->setCursorPosition(0);
    showError(QString());
}

void TextParameterControl::accept() { in_force_ = entry_->text(); }

void TextParameterControl::restore() {
    shown_ = in_force_;
    entry_->setText(in_force_);
    entry_->setCursorPosition(0);
    showError(QString());
}

void TextParameterControl::setState(const QString& text, bool active) {
    state_->setText(text);
    setSheet(state_, active ? QStringLiteral("color: #0072B2; font-weight: bold;")
                            : QStringLiteral("color: #777777; font-style: italic;"));
}

void TextParameterControl::showError(const QString& message) {
    const bool changed = message != error_;
    error_ = message;
    setSheet(entry_, message.isEmpty() ? QString() : kRefusedBorder);
    if (changed) emit errorChanged(message);
}

void TextParameterControl::showNote(const QString& note) { note_->setMessage(note, QColor(0x55, 0x55, 0x55)); }

}  // namespace samplescope::ui
