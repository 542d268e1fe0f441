/*
 * uart.c — the 16550 UART of QEMU's virt machine, interrupt-driven.
 *
 * Output from processes goes into a ring that the transmit-empty interrupt
 * drains; input bytes are collected by the receive interrupt into another
 * ring, from which the console server's read requests are answered
 * (console_service.c). The kernel's own messages (boot, panic) bypass the ring and
 * wait on the transmitter directly.
 *
 * Input is flow-controlled, never dropped: when the input ring is full the
 * receive interrupt is turned off and the next byte stays in the UART's
 * receive register. The UART takes no byte while that register is full
 * (its FIFO is left off), so the sender waits: QEMU stops reading the
 * host's pipe or terminal. Reading from the ring turns the interrupt on
 * again (uart_read_input).
 */
#include "defs.h"

#define UART_BASE 0x10000000UL
#define REG(r) (*(volatile uint8_t *)(UART_BASE + (r)))
#define RBR 0   /* receive buffer (read) */
#define THR 0   /* transmit holding (write) */
#define IER 1   /* interrupt enable */
#define FCR 2   /* FIFO control (write) */
#define LCR 3   /* line control */
#define LSR 5   /* line status */
#define IER_RX 0x01
#define IER_TX 0x02
#define LSR_RX_READY 0x01
#define LSR_TX_EMPTY 0x20

#define TX_RING 16384
#define RX_RING 4096
static uint8_t tx_ring[TX_RING];
static uint32_t tx_head, tx_tail;     /* head: next to send; tail: next free */
static uint8_t rx_ring[RX_RING];
static uint32_t rx_head, rx_tail;
static int rx_stopped;                /* the input ring is full: the receive interrupt is off */

/* Turn on the interrupts there is work for: receive unless the input ring
 * is full, transmit-empty while output is queued. */
static void uart_enable_interrupts(void)
{
    REG(IER) = (rx_stopped ? 0 : IER_RX) | (tx_head != tx_tail ? IER_TX : 0);
}

void uart_init(void)
{
    REG(IER) = 0;
    REG(LCR) = 0x03;          /* 8 data bits, no parity, one stop bit */
    /* FCR untouched: enabling or clearing the FIFOs would drop input that
     * arrived before the kernel started (piped input does). */
    REG(IER) = IER_RX;
}

void uart_putc_sync(int c)
{
    while (!(REG(LSR) & LSR_TX_EMPTY))
        ;
    REG(THR) = (uint8_t)c;
}

/* Move bytes from the ring to the transmitter while it takes them. */
static void uart_start_output(void)
{
    while (tx_head != tx_tail && (REG(LSR) & LSR_TX_EMPTY)) {
        REG(THR) = tx_ring[tx_head % TX_RING];
        tx_head++;
    }
    uart_enable_interrupts();
}

uint32_t uart_output_space(void)
{
    return TX_RING - (tx_tail - tx_head);
}

/* Queue up to n bytes (a '\n' becomes "\r\n"); returns how many of p were taken. */
uint32_t uart_queue_output(const uint8_t *p, uint32_t n)
{
    uint32_t i = 0;
    for (; i < n; i++) {
        uint32_t need = p[i] == '\n' ? 2 : 1;
        if (uart_output_space() < need)
            break;
        if (p[i] == '\n')
            tx_ring[tx_tail++ % TX_RING] = '\r';
        tx_ring[tx_tail++ % TX_RING] = p[i];
    }
    uart_start_output();
    return i;
}

/* Take up to max received bytes from the input ring. If the ring was full,
 * the receive interrupt comes on again: the UART raises it at once for a
 * byte that waits in its receive register. */
uint32_t uart_read_input(uint8_t *p, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && rx_head != rx_tail)
        p[n++] = rx_ring[rx_head++ % RX_RING];
    if (rx_stopped && n > 0) {
        rx_stopped = 0;
        uart_enable_interrupts();
    }
    return n;
}

/* The UART's interrupt: take received bytes while the input ring has room
 * (when it is full, stop receiving: see the top of this file), send what
 * is queued. */
#define CONTROL_T 0x14

void uart_interrupt(void)
{
    int got = 0;
    while (rx_tail - rx_head < RX_RING && (REG(LSR) & LSR_RX_READY)) {
        uint8_t c = REG(RBR);
        if (c == CONTROL_T) {          /* the machine's state, at once (like BSD's SIGINFO) */
            kernel_status();
            continue;
        }
        rx_ring[rx_tail++ % RX_RING] = c;
        got = 1;
    }
    rx_stopped = rx_tail - rx_head == RX_RING;
    uint32_t before = uart_output_space();
    uart_start_output();
    if (got)
        console_input_ready();
    if (uart_output_space() != before)
        console_output_ready();
}

/* Wait until every queued byte has gone out (before power-off). */
void uart_drain(void)
{
    while (tx_head != tx_tail) {
        uart_putc_sync(tx_ring[tx_head % TX_RING]);
        tx_head++;
    }
    while (!(REG(LSR) & 0x40))   /* transmitter idle */
        ;
}
