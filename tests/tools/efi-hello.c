/* A minimal EFI application for the firmware tests: prints a marker on the
 * console (OVMF copies it to the serial port) and powers the machine off,
 * so a test knows the image was allowed to run. Built with gnu-efi by
 * tests/tools/build-efi-hello.sh. */
#include <efi.h>
#include <efilib.h>

EFI_STATUS EFIAPI efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    InitializeLib(image, systab);
    Print(L"REPROSIGN-HELLO-RAN\r\n");
    uefi_call_wrapper(RT->ResetSystem, 4, EfiResetShutdown, EFI_SUCCESS, 0, NULL);
    return EFI_SUCCESS;
}
